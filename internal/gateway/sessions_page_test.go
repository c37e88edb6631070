package gateway_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

// persistentServer is sessionsServer over the SQLite state store, returning the app too.
func persistentServer(t *testing.T) (*httptest.Server, *app.App) {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(`{agents: {defaults: {model: "scripted/demo"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "NODMIX_HOME" || k == "HOME" {
			return home
		}
		return ""
	}
	a, err := app.New(context.Background(), app.Options{Getenv: env, Persistent: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gateway.WithAPI(http.NotFoundHandler(), &gateway.API{Agent: a}))
	t.Cleanup(func() { srv.Close(); a.Close() })
	return srv, a
}

type sessPage struct {
	Object    string    `json:"object"`
	Data      []sessRow `json:"data"`
	HasMore   *bool     `json:"has_more"`
	NextAfter *string   `json:"next_after"`
	Defaults  *sessRow  `json:"defaults"`
}

// walkAPI lists every page of GET /v1/sessions from the first, with query (limit) added,
// calling between after each page but the last, and returns the keys met.
func walkAPI(t *testing.T, srv *httptest.Server, query string, between func(page int)) []string {
	t.Helper()
	var keys []string
	after := ""
	for page := 0; page < 20; page++ {
		path := "/v1/sessions?" + query
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		resp, b := sessDo(t, srv, sessCall{method: "GET", path: path})
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		p := sessDecode[sessPage](t, b)
		if p.Object != "list" || p.HasMore == nil || p.Defaults == nil || p.Data == nil {
			t.Fatalf("page %d is not a list with has_more, data and defaults: %s", page, b)
		}
		for _, r := range p.Data {
			keys = append(keys, r.Key)
		}
		if !*p.HasMore {
			if p.NextAfter != nil {
				t.Errorf("the last page has next_after %q", *p.NextAfter)
			}
			return keys
		}
		if p.NextAfter == nil || *p.NextAfter == "" {
			t.Fatalf("page %d has more but no next_after: %s", page, b)
		}
		if between != nil {
			between(page)
		}
		after = *p.NextAfter
	}
	t.Fatal("the walk did not end after 20 pages")
	return nil
}

// 250 sessions in pages of 100: three pages, every session once, most recently updated first;
// also while sessions are updated between the pages, when an updated one moves to the front
// (which the walk has passed) and is not listed again.
func TestSessionsListIsPaged(t *testing.T) {
	ctx := context.Background()
	srv, a := persistentServer(t)
	keys := sessiontest.Make(ctx, t, a.Store, 250)

	var pages int
	got := walkAPI(t, srv, "limit=100", func(int) { pages++ })
	if diff := cmp.Diff(keys, got); diff != "" {
		t.Errorf("pages of 100 (-want +got):\n%s", diff)
	}
	if pages != 2 {
		t.Errorf("%d pages with more after them, want 2", pages)
	}
	// The default page is DefaultPage rows.
	_, b := sessDo(t, srv, sessCall{method: "GET", path: "/v1/sessions"})
	if p := sessDecode[sessPage](t, b); len(p.Data) != session.DefaultPage || !*p.HasMore {
		t.Errorf("default page: %d rows, has_more %v", len(p.Data), *p.HasMore)
	}
	// Unknown parameters are ignored, as before.
	if resp, b := sessDo(t, srv, sessCall{method: "GET", path: "/v1/sessions?limit=250&order=asc"}); resp.StatusCode != 200 || len(sessDecode[sessPage](t, b).Data) != 250 {
		t.Errorf("limit=250&order=asc: %d %.200s", resp.StatusCode, b)
	}

	touch := func(k string) {
		if _, err := a.PatchSession(ctx, k, app.SessionPatch{"verbose": new("on")}); err != nil {
			t.Fatal(err)
		}
	}
	// After the first page a session of it and one of the last; after the second, the first
	// page's again and the row the second page ended on.
	updated := map[int][]string{0: {keys[3], keys[240]}, 1: {keys[3], keys[199]}}
	got = walkAPI(t, srv, "limit=100", func(page int) {
		for _, k := range updated[page] {
			touch(k)
		}
	})
	seen := map[string]bool{}
	for _, k := range got {
		if seen[k] {
			t.Errorf("%s listed twice in one walk", k)
		}
		seen[k] = true
	}
	for i, k := range keys {
		if !seen[k] && k != keys[240] {
			t.Errorf("session %d (%s), not updated during the walk, was not listed", i, k)
		}
	}
	if seen[keys[240]] {
		t.Errorf("%s, updated before the walk reached it, was listed after the cursor", keys[240])
	}
	again := walkAPI(t, srv, "limit=100", nil)
	if diff := cmp.Diff([]string{keys[199], keys[3], keys[240]}, again[:3]); diff != "" {
		t.Errorf("the next walk's front, latest update first (-want +got):\n%s", diff)
	}
}

func TestSessionsListRefusesABadPage(t *testing.T) {
	srv := sessionsServer(t, "")
	for _, q := range []struct{ query, param string }{
		{"limit=0", "limit"},
		{"limit=-1", "limit"},
		{"limit=1001", "limit"},
		{"limit=ten", "limit"},
		{"limit=", "limit"},
		{"limit=1.5", "limit"},
		{"after=s001", "after"},
		{"after=" + base64.RawURLEncoding.EncodeToString([]byte{9, 2, 'k'}), "after"},
		{"after=%25%25", "after"},
	} {
		resp, b := sessDo(t, srv, sessCall{method: "GET", path: "/v1/sessions?" + q.query})
		if resp.StatusCode != 400 {
			t.Errorf("%s: status %d, want 400: %s", q.query, resp.StatusCode, b)
			continue
		}
		e := sessDecode[apiErr](t, b)
		if e.Error.Param == nil || *e.Error.Param != q.param || e.Error.Code != "invalid_value" || !strings.HasPrefix(e.Error.Message, q.param+": must be") {
			t.Errorf("%s: error %s, want invalid_value naming %s and the rule", q.query, b, q.param)
		}
	}
	// A long value is echoed cut at a rune boundary: 31 ASCII bytes and then "é" (2 bytes)
	// straddle the 32-byte cut.
	long := strings.Repeat("x", 31) + "ééé"
	resp, b := sessDo(t, srv, sessCall{method: "GET", path: "/v1/sessions?limit=" + url.QueryEscape(long)})
	if resp.StatusCode != 400 {
		t.Fatalf("long limit: status %d: %s", resp.StatusCode, b)
	}
	if msg := sessDecode[apiErr](t, b).Error.Message; !strings.Contains(msg, strings.Repeat("x", 31)+"…") || strings.ContainsRune(msg, utf8.RuneError) {
		t.Errorf("long limit: message %q, want the value cut before the rune it would split", msg)
	}
	// The bounds themselves and an empty after (the first page) are pages.
	for _, q := range []string{"limit=1", "limit=1000", "after=", "limit=5&after="} {
		if resp, b := sessDo(t, srv, sessCall{method: "GET", path: "/v1/sessions?" + q}); resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", q, resp.StatusCode, b)
		}
	}
}
