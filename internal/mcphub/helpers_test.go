package mcphub

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeNet connects the hub to in-process Go MCP servers instead of processes and URLs.
type fakeNet struct {
	mu       sync.Mutex
	servers  map[string]*mcp.Server
	sessions map[string][]*mcp.ServerSession
	dials    map[string]int
	silent   map[string]bool          // never answers initialize
	garbage  map[string]bool          // writes a non-JSON line instead of answering
	refuse   map[string]error         // dial fails with this error
	gate     map[string]chan struct{} // dial waits until the channel is closed
	raw      map[string]rawHandler    // a server written by hand (see rawTransport)
	rawWG    sync.WaitGroup
}

func newFakeNet() *fakeNet {
	return &fakeNet{
		servers:  map[string]*mcp.Server{},
		sessions: map[string][]*mcp.ServerSession{},
		dials:    map[string]int{},
		silent:   map[string]bool{},
		garbage:  map[string]bool{},
		refuse:   map[string]error{},
		gate:     map[string]chan struct{}{},
		raw:      map[string]rawHandler{},
	}
}

func (f *fakeNet) dial(ctx context.Context, d *downstream) (mcp.Transport, error) {
	name := d.cfg.Name
	f.mu.Lock()
	gate := f.gate[name]
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dials[name]++
	if err := f.refuse[name]; err != nil {
		return nil, err
	}
	switch {
	case f.raw[name] != nil:
		return rawTransport{handle: f.raw[name], wg: &f.rawWG, leftOut: d.noteLeftOut}, nil
	case f.silent[name]:
		pr, _ := io.Pipe()
		return &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{io.Discard}}, nil
	case f.garbage[name]:
		return &mcp.IOTransport{Reader: io.NopCloser(strings.NewReader("this is not JSON-RPC\n")), Writer: nopWriteCloser{io.Discard}}, nil
	}
	srv, ok := f.servers[name]
	if !ok {
		return nil, fmt.Errorf("no such fake server %q", name)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	f.sessions[name] = append(f.sessions[name], ss)
	return ct, nil
}

// kill ends every session of the server, as if its process died.
func (f *fakeNet) kill(name string) {
	f.mu.Lock()
	ss := f.sessions[name]
	f.sessions[name] = nil
	f.mu.Unlock()
	for _, s := range ss {
		_ = s.Close()
	}
}

func (f *fakeNet) dialCount(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dials[name]
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// newTestServer is a Go MCP server with an echo tool and the given extra tool names.
func newTestServer(name string, opts *mcp.ServerOptions, extra ...string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, opts)
	type echoIn struct {
		Message string `json:"message,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Title: "Echo", Description: "Echoes the message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": " + in.Message}}}, nil, nil
		})
	for _, n := range extra {
		addPlainTool(s, n)
	}
	return s
}

func addPlainTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, Description: "The " + name + " tool.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
		})
}

// testHub starts a hub on the fake network and closes it at cleanup. notified counts Notify calls.
func testHub(t *testing.T, f *fakeNet, opts Options, servers ...ServerConfig) (h *Hub, notified *atomic.Int32) {
	t.Helper()
	notified = new(atomic.Int32)
	opts.Servers = servers
	opts.Notify = func() { notified.Add(1) }
	if opts.Log == nil {
		opts.Log = testLogger(t)
	}
	if opts.Backoff == (Backoff{}) {
		opts.Backoff = Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond, StableAfter: time.Hour}
	}
	h = New(opts)
	if f != nil {
		h.dial = f.dial
	}
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h, notified
}

func enabled(name string) ServerConfig {
	return ServerConfig{Name: name, Command: "unused-" + name, Enabled: true}
}

// waitState waits for the server's state, failing the test after a generous deadline.
func waitState(t *testing.T, h *Hub, server string, states ...State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := h.WaitState(ctx, server, states...); err != nil {
		t.Fatal(err)
	}
}

// waitFor waits until cond holds, re-checking at every hub change.
func waitFor(t *testing.T, h *Hub, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		ch := h.Changed()
		if cond() {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-ch:
		case <-time.After(50 * time.Millisecond): // conditions outside the hub (e.g. notify counts)
		}
	}
}

func statusOf(h *Hub, name string) ServerStatus {
	for _, s := range h.Status() {
		if s.Name == name {
			return s
		}
	}
	return ServerStatus{}
}

// logCapture keeps every log line, for tests that look at what was logged.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	return len(p), nil
}

func (c *logCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func captureLog(t *testing.T) (*slog.Logger, *logCapture) {
	c := &logCapture{}
	return slog.New(slog.NewTextHandler(io.MultiWriter(c, &testWriter{t: t}), &slog.HandlerOptions{Level: slog.LevelDebug})), c
}

// testLogger writes to the test log only when the test fails or -v is set.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(&testWriter{t: t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	t  *testing.T
	mu sync.Mutex
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { _ = recover() }() // a log line after the test ended must not panic
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// fakeClock is a clock that moves only when the test says so.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	added  chan struct{} // a timer was added; capacity 1
}

type fakeTimer struct {
	at time.Time
	c  chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), added: make(chan struct{}, 1)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), c: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	select {
	case c.added <- struct{}{}:
	default:
	}
	return t.c, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.timers = slices.DeleteFunc(c.timers, func(x *fakeTimer) bool { return x == t })
	}
}

// Advance moves the time on and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool {
		if t.at.After(c.now) {
			return false
		}
		t.c <- c.now
		return true
	})
}

// waitTimer waits until somebody waits on the clock.
func (c *fakeClock) waitTimer(t *testing.T) {
	t.Helper()
	for {
		c.mu.Lock()
		n := len(c.timers)
		c.mu.Unlock()
		if n > 0 {
			return
		}
		select {
		case <-c.added:
		case <-time.After(30 * time.Second):
			t.Fatal("nobody waited on the clock")
		}
	}
}

// waitTimerAt waits until somebody waits on the clock for the time at.
func (c *fakeClock) waitTimerAt(t *testing.T, at time.Time) {
	t.Helper()
	for {
		c.mu.Lock()
		found := slices.ContainsFunc(c.timers, func(x *fakeTimer) bool { return x.at.Equal(at) })
		c.mu.Unlock()
		if found {
			return
		}
		select {
		case <-c.added:
		case <-time.After(30 * time.Second):
			t.Fatalf("nobody waited on the clock for %s", at)
		}
	}
}

// memManifests is a Manifests in memory.
type memManifests struct {
	mu    sync.Mutex
	data  map[string][]byte
	saves int
}

func newMemManifests() *memManifests { return &memManifests{data: map[string][]byte{}} }

func (m *memManifests) LoadManifest(_ context.Context, server string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.data[server], nil
}

func (m *memManifests) SaveManifest(_ context.Context, server string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data[server] = slices.Clone(data)
	m.saves++
	return nil
}

func (m *memManifests) saveCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saves
}
