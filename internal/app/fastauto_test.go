package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fastAutoApp is an app whose openai provider is mock, with params for openai/gpt-5.2.
func fastAutoApp(t *testing.T, mock *llmtest.Server, params string) *App {
	t.Helper()
	home := t.TempDir()
	cfg := fmt.Sprintf(`{
  models: {providers: {openai: {baseUrl: %q}}},
  agents: {defaults: {model: "openai/gpt-5.2", models: {"openai/gpt-5.2": {params: %s}}}},
  tools: {allow: ["exec"]},
}`, mock.URL+"/v1", params)
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NODMIX_HOME": home, "HOME": home, "OPENAI_API_KEY": "sk-openai-FAKE-0001"}
	a, err := New(context.Background(), Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// serviceTier is the service_tier a request to the mock sent, or "".
func serviceTier(t *testing.T, s *llmtest.Seen) string {
	t.Helper()
	var body struct {
		ServiceTier string `json:"service_tier"`
	}
	if err := json.Unmarshal(s.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.ServiceTier
}

// TestFastAuto: under /fast auto the model calls of a run that start within the window
// (fastAutoOnSeconds, default 60) are fast, and later calls of the same run are not.
func TestFastAuto(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		pause        time.Duration // how long the tool call takes, on the app's clock
		want         []string      // service_tier of each model call
	}{
		{"both calls within the default window", `{}`, 59 * time.Second, []string{"priority", "priority"}},
		{"the second call after the default window", `{}`, 61 * time.Second, []string{"priority", ""}},
		{"a window of 10 s", `{fastAutoOnSeconds: 10}`, 11 * time.Second, []string{"priority", ""}},
		{"an alias", `{fast_seconds: 120}`, 61 * time.Second, []string{"priority", "priority"}},
		{"a window of 0", `{fastAutoOnSeconds: 0}`, 0, []string{"", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
			mock := llmtest.NewOpenAI(func(s *llmtest.Seen) llmtest.Reply {
				if s.Last.Role == "user" {
					clock.advance(tc.pause) // the tool call runs this long
					return llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "exec", Args: `{"command":["true"]}`}}}
				}
				return llmtest.Reply{Text: "done"}
			})
			defer mock.Close()
			a := fastAutoApp(t, mock, tc.params)
			a.now = clock.Now
			res, err := a.Turn(context.Background(), TurnRequest{Session: "s", Input: userText("/fast auto run it")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "done" {
				t.Fatalf("turn answered %q, want done", res.Text)
			}
			var got []string
			for _, s := range mock.Requests() {
				got = append(got, serviceTier(t, s))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("service_tier per model call (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFastAutoDryRun: the dry run of /fast auto is the request a run starting now sends first:
// fast, unless the window is 0.
func TestFastAutoDryRun(t *testing.T) {
	mock := llmtest.NewOpenAI(func(*llmtest.Seen) llmtest.Reply { return llmtest.Reply{Text: "unused"} })
	defer mock.Close()
	body := func(a *App, text string) string {
		t.Helper()
		dr, reply, err := a.Prepare(context.Background(), TurnRequest{Session: "d", Ephemeral: true, Input: userText(text)})
		if err != nil || reply != "" {
			t.Fatalf("%s: %v %s", text, err, reply)
		}
		return string(dr.Body)
	}
	a := fastAutoApp(t, mock, `{}`)
	if got, want := body(a, "/fast auto hi"), body(a, "/fast on hi"); got != want {
		t.Errorf("/fast auto dry run:\n got %s\nwant %s (as /fast on)", got, want)
	}
	zero := fastAutoApp(t, mock, `{fastAutoOnSeconds: 0}`)
	if got, want := body(zero, "/fast auto hi"), body(zero, "/fast off hi"); got != want {
		t.Errorf("/fast auto dry run with a window of 0:\n got %s\nwant %s (as /fast off)", got, want)
	}
}
