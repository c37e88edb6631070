package main_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
	"github.com/nodmix/nodmix/internal/session/sqlite"
)

// listedKeys reads the keys of `sessions list`'s table.
func listedKeys(t *testing.T, out string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "KEY ") {
		t.Fatalf("no table header:\n%.300s", out)
	}
	var keys []string
	for _, l := range lines[1:] {
		keys = append(keys, strings.Fields(l)[0])
	}
	return keys
}

func jsonKeys(t *testing.T, out string) []string {
	t.Helper()
	var infos []session.Info
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		t.Fatalf("--json is not one JSON array: %v\n%.300s", err, out)
	}
	keys := []string{}
	for _, in := range infos {
		keys = append(keys, in.Key)
	}
	return keys
}

// `nodmix sessions list` over 250 sessions lists the latest 100 and says on stderr how to see
// more; --limit and --all list more, in order, each session once; --json stays one array.
func TestSessionsListShowsAPage(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	env := baseEnv(home)
	st, err := sqlite.Open(ctx, filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	keys := sessiontest.Make(ctx, t, st, 250)
	st.Close()

	const more = "more sessions follow the %d listed: --limit N lists more, --all every one\n"
	for _, c := range []struct {
		args   []string
		json   bool
		want   []string
		stderr string
	}{
		{[]string{"sessions", "list"}, false, keys[:100], strings.Replace(more, "%d", "100", 1)},
		{[]string{"sessions", "list", "--limit", "249"}, false, keys[:249], strings.Replace(more, "%d", "249", 1)},
		{[]string{"sessions", "list", "--limit", "250"}, false, keys, ""},
		{[]string{"sessions", "list", "--limit", "5000"}, false, keys, ""},
		{[]string{"sessions", "list", "--all"}, false, keys, ""},
		{[]string{"sessions", "list", "--json"}, true, keys[:100], strings.Replace(more, "%d", "100", 1)},
		{[]string{"sessions", "list", "--json", "--all"}, true, keys, ""},
	} {
		out, errOut, code := run(t, env, "", c.args...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s", c.args, code, errOut)
			continue
		}
		got := []string(nil)
		if c.json {
			got = jsonKeys(t, out)
		} else {
			got = listedKeys(t, out)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", c.args, diff)
		}
		if errOut != c.stderr {
			t.Errorf("%v: stderr %q, want %q", c.args, errOut, c.stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sessions", "list", "--limit", "0"}, "--limit: must be at least 1"},
		{[]string{"sessions", "list", "--limit", "-3"}, "--limit: must be at least 1"},
		{[]string{"sessions", "list", "--all", "--limit", "5"}, "--all and --limit"},
	} {
		if out, errOut, code := run(t, env, "", c.args...); code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming %q", c.args, code, out, errOut, c.want)
		}
	}
}

// `sessions list --all` reads page after page while a turn's writes update sessions: none is
// listed twice, and every session that no write touched while it ran is listed.
func TestSessionsListAllWhileSessionsAreUpdated(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	env := baseEnv(home)
	st, err := sqlite.Open(ctx, filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys := sessiontest.Make(ctx, t, st, 250)

	for round := range 3 {
		var mu sync.Mutex
		touched := map[string]bool{}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			// From the oldest session up, so that the walk meets sessions it has not reached
			// moving to the front.
			for i := len(keys) - 1; i >= 0; i-- {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				touched[keys[i]] = true
				mu.Unlock()
				if _, err := st.Update(ctx, keys[i], func(in *session.Info) error { in.Model = "p/m"; return nil }); err != nil {
					t.Error(err)
					return
				}
			}
		})
		out, errOut, code := run(t, env, "", "sessions", "list", "--all", "--json")
		close(stop)
		wg.Wait()
		if code != 0 {
			t.Fatalf("round %d: exit %d\n%s", round, code, errOut)
		}
		seen := map[string]bool{}
		for _, k := range jsonKeys(t, out) {
			if seen[k] {
				t.Errorf("round %d: %s listed twice", round, k)
			}
			seen[k] = true
		}
		for _, k := range keys {
			if !seen[k] && !touched[k] {
				t.Errorf("round %d: %s, not updated during the listing, is missing", round, k)
			}
		}
	}
}
