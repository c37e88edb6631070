package tavily

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/plugin"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const testKey = "tvly-dev-Sup3rS3cretKey0123456789"

// Documented bodies (providers-and-tavily-api.md §7.3, §7.4), plus a news result whose
// published_date is an RFC 1123 GMT time and one whose date is not a date.
const (
	docSearchResponse = `{"query":"Go 1.25 release notes","answer":"Go 1.25 ...","images":[],
 "results":[{"title":"Go 1.25 Release Notes","url":"https://go.dev/doc/go1.25",
   "content":"... [...] ...","score":0.83,"raw_content":null,
   "favicon":"https://go.dev/favicon.ico","id":"a3f9c2-04"},
  {"title":"Go 1.25 is released","url":"https://go.dev/blog/go1.25","content":"Today the Go team is happy to release Go 1.25.",
   "score":0.71,"published_date":"Tue, 12 Aug 2025 16:00:00 GMT"},
  {"title":"","url":"https://example.com/x","content":"undated","score":"high","published_date":"last week"}],
 "response_time":"1.21","usage":{"credits":2},"request_id":"123e4567-e89b-12d3-a456-426614174111"}`

	docExtractResponse = `{"results":[{"url":"https://go.dev/doc/go1.25","raw_content":"# Go 1.25 ...","images":["https://go.dev/images/gopher.png"],
   "favicon":"https://go.dev/favicon.ico"}],
 "failed_results":[{"url":"https://example.invalid/x","error":"Failed to fetch url"}],
 "response_time":0.92,"usage":{"credits":1},"request_id":"..."}`
)

// seen is one request as the fake Tavily server received it.
type seen struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any
	Raw          string
}

// reply is one scripted answer of the fake server.
type reply struct {
	status int
	header map[string]string
	body   string
}

// fakeTavily speaks the documented API: POST /search and /extract with JSON bodies. Scripted
// replies are used in order; once they run out it answers with the documented 200 bodies.
type fakeTavily struct {
	srv *httptest.Server

	mu      sync.Mutex
	reqs    []seen
	replies []reply
}

func newFakeTavily(t testing.TB, replies ...reply) *fakeTavily {
	t.Helper()
	f := &fakeTavily{replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeTavily) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.reqs = append(f.reqs, seen{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: string(raw)})
	var rep reply
	if len(f.replies) > 0 {
		rep, f.replies = f.replies[0], f.replies[1:]
	} else if strings.HasSuffix(r.URL.Path, "/extract") {
		rep = reply{status: 200, body: docExtractResponse}
	} else {
		rep = reply{status: 200, body: docSearchResponse}
	}
	f.mu.Unlock()
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

func (f *fakeTavily) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

func (f *fakeTavily) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is a mutable test environment for Host.LookupEnv.
type env struct {
	mu sync.Mutex
	m  map[string]string
}

func (e *env) lookup(k string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.m[k]
	return v, ok
}

func (e *env) set(k, v string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[k] = v
}

// rig is a started plugin wired to a fake server, a fake clock, recorded sleeps and captured logs.
type rig struct {
	p      *Plugin
	srv    *fakeTavily
	clock  *fakeClock
	env    *env
	logs   *syncBuffer
	mu     sync.Mutex
	sleeps []time.Duration
}

type rigOpts struct {
	config   string            // plugins.entries.tavily.config; "" means {"webSearch":{"baseUrl": <server>}}
	env      map[string]string // nil means TAVILY_API_KEY=testKey
	settings map[string]any
	replies  []reply
	client   *http.Client
}

func newRig(t testing.TB, o rigOpts) *rig {
	t.Helper()
	r := &rig{srv: newFakeTavily(t, o.replies...), clock: &fakeClock{t: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)}, logs: &syncBuffer{}}
	if o.env == nil {
		o.env = map[string]string{EnvAPIKey: testKey}
	}
	r.env = &env{m: o.env}
	cfg := o.config
	if cfg == "" {
		cfg = fmt.Sprintf(`{"webSearch":{"baseUrl":%q}}`, r.srv.srv.URL)
	}
	cfg = strings.ReplaceAll(cfg, "$SERVER", r.srv.srv.URL)
	p := New()
	p.now = r.clock.now
	n := 0
	var idMu sync.Mutex
	p.markerID = func() string {
		idMu.Lock()
		defer idMu.Unlock()
		n++
		return fmt.Sprintf("%016x", n)
	}
	p.client.sleep = func(ctx context.Context, d time.Duration) error {
		r.mu.Lock()
		r.sleeps = append(r.sleeps, d)
		r.mu.Unlock()
		return ctx.Err()
	}
	client := o.client
	if client == nil {
		client = r.srv.srv.Client()
	}
	host := plugin.Host{
		Log:        slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LookupEnv:  r.env.lookup,
		HTTPClient: client,
		Settings:   o.settings,
	}
	if err := p.Decode(json.RawMessage(cfg)); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if err := p.Init(context.Background(), host); err != nil {
		t.Fatalf("Init: %v", err)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	r.p = p
	return r
}

func (r *rig) recordedSleeps() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.sleeps...)
}

// call runs the named tool of the plugin with args.
func (r *rig) call(t *testing.T, name, args string) *catalog.Result {
	t.Helper()
	for _, e := range r.p.Tools() {
		if e.Tool.Name == name {
			res, err := e.Exec.Execute(context.Background(), catalog.Call{Tool: &e.Tool, Args: json.RawMessage(args)})
			if err != nil {
				t.Fatalf("%s: Execute returned a Go error: %v", name, err)
			}
			return res
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// structured decodes a successful result's structured content.
func structured(t *testing.T, res *catalog.Result) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", res.Text())
	}
	var m map[string]any
	if err := json.Unmarshal(res.Structured, &m); err != nil {
		t.Fatalf("structured content: %v", err)
	}
	return m
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// golden compares got with testdata/golden/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// keys returns the cached keys, most recent first, for tests that check what a key holds.
func (c *lru[V]) keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, c.order.Len())
	for el := c.order.Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(*lruEntry[V]).key)
	}
	return out
}

func callOf(e *catalog.Entry, args string) catalog.Call {
	return catalog.Call{Tool: &e.Tool, Args: json.RawMessage(args)}
}

func (c *lru[V]) bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}
