package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// heldInput is a client that keeps its end of stdin open: Read blocks until the test ends, and
// Close does not end it, as closing os.Stdin does not end a read in progress.
type heldInput struct {
	once    sync.Once
	release chan struct{}
}

func newHeldInput(t *testing.T) *heldInput {
	h := &heldInput{release: make(chan struct{})}
	t.Cleanup(func() { h.once.Do(func() { close(h.release) }) })
	return h
}

func (h *heldInput) Read([]byte) (int, error) {
	<-h.release
	return 0, io.EOF
}

func (h *heldInput) Close() error { return nil }

// sessionOf returns the fake core session with id, waiting for it to be opened.
func sessionOf(t *testing.T, sessions *fakeSessions, id string) *fakeSession {
	t.Helper()
	var fs *fakeSession
	waitUntil(t, "session "+id, func() bool {
		sessions.mu.Lock()
		defer sessions.mu.Unlock()
		fs = sessions.opened[id]
		return fs != nil
	})
	return fs
}

// TestStdioShutdownWithInputHeldOpen: ending Serve's context ends ServeStdio at once although
// the client neither sends nor closes anything, and ends the call in progress.
func TestStdioShutdownWithInputHeldOpen(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{SessionID: "held"})
	t.Cleanup(func() { _ = srv.Close() })
	in := newHeldInput(t)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(ctx, in, io.Discard) }()
	sessionOf(t, sessions, "held")
	endsOnCancel(t, cancel, served)
}

// TestStdioShutdownWithPipeHeldOpen: the same over an OS pipe, which Read reads itself; Close
// ends that read.
func TestStdioShutdownWithPipeHeldOpen(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{SessionID: "held"})
	t.Cleanup(func() { _ = srv.Close() })
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(ctx, inR, io.Discard) }()
	sessionOf(t, sessions, "held")
	endsOnCancel(t, cancel, served)
}

// TestShutdownEndsCallsInProgress: the SDK's session Close waits for calls in progress, so a
// shutdown (Serve's context, Server.Close) must cancel them, not wait for them.
func TestShutdownEndsCallsInProgress(t *testing.T) {
	tests := []struct {
		name string
		end  func(cancel context.CancelFunc, srv *Server)
	}{
		{"serve context", func(cancel context.CancelFunc, _ *Server) { cancel() }},
		{"server close", func(_ context.CancelFunc, srv *Server) { _ = srv.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leaktest.Check(t)
			sessions := newFakeSessions()
			srv := New(sessions, Options{SessionID: "busy"})
			t.Cleanup(func() { _ = srv.Close() })
			st, ct := mcp.NewInMemoryTransports()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ctx, st) }()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			fs := sessionOf(t, sessions, "busy")
			fs.slowIn = make(chan struct{})
			called := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow"})
				called <- err
			}()
			<-fs.slowIn
			tt.end(cancel, srv)
			select {
			case <-served:
			case <-time.After(5 * time.Second):
				t.Fatal("Serve waited for the call in progress")
			}
			if err := <-called; err == nil {
				t.Error("the call in progress succeeded after shutdown")
			}
			if !fs.closed.Load() {
				t.Error("core session not closed")
			}
		})
	}
}

// TestStdioBeforeInitialize: a call before initialize is refused with a JSON-RPC code, not 0.
func TestStdioBeforeInitialize(t *testing.T) {
	leaktest.Check(t)
	srv := New(newFakeSessions(), Options{})
	t.Cleanup(func() { _ = srv.Close() })
	p := newStdioPeer(t, srv, false)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	want := map[string]any{"jsonrpc": "2.0", "id": float64(1), "error": map[string]any{
		"code": float64(jsonrpc.CodeInvalidRequest), "message": `method "tools/list" is invalid during session initialization`}}
	if diff := cmp.Diff(want, p.reply()); diff != "" {
		t.Errorf("tools/list before initialize (-want +got):\n%s", diff)
	}
	// ping is allowed before initialize.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got := p.reply(); got["error"] != nil || got["id"] != float64(2) {
		t.Errorf("ping before initialize = %v", got)
	}
}

func TestWithCode(t *testing.T) {
	tests := []struct {
		err  error
		want *jsonrpc.Error
	}{
		{errors.New(`method "tools/call" ` + errBeforeInitialize), &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: `method "tools/call" ` + errBeforeInitialize}},
		{errors.New("boom"), &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "boom"}},
		{&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}},
		{&jsonrpc.Error{Message: "no code", Data: []byte(`{"k":1}`)}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no code", Data: []byte(`{"k":1}`)}},
	}
	for _, tt := range tests {
		var got *jsonrpc.Error
		if !errors.As(withCode(tt.err), &got) {
			t.Fatalf("withCode(%v) is not a *jsonrpc.Error", tt.err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("withCode(%v) (-want +got):\n%s", tt.err, diff)
		}
	}
}

// callEcho calls the fake echo tool and checks its answer.
func callEcho(t *testing.T, cs *mcp.ClientSession, msg string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
	if err == nil && textOf(res) != "echo: "+msg {
		err = errors.New("echo answered " + textOf(res))
	}
	return err
}

func TestSessionCapEvictsOldestIdle(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{MaxSessions: 2})
	ts := httpServer(t, srv)
	url := ts.URL + "/mcp"

	a, _ := connectHTTP(t, url)
	b, bChanged := connectHTTP(t, url)
	// The opening of b's event stream is activity too: wait for it, by what only that stream
	// carries, before a's call makes b the one idle longest.
	waitUntil(t, "b's event stream", func() bool {
		sessionOf(t, sessions, b.ID()).activate(fmt.Sprintf("t%d", time.Now().UnixNano()))
		select {
		case <-bChanged:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	if err := callEcho(t, a, "a is active"); err != nil { // b is now the one idle longest
		t.Fatal(err)
	}
	c, _ := connectHTTP(t, url)
	waitUntil(t, "b's core session to be closed", func() bool { return sessionOf(t, sessions, b.ID()).closed.Load() })
	if err := callEcho(t, b, "b"); err == nil {
		t.Error("the evicted session b still answers")
	}
	for _, cs := range []*mcp.ClientSession{a, c} {
		if err := callEcho(t, cs, "still here"); err != nil {
			t.Errorf("session %s after the eviction: %v", cs.ID(), err)
		}
	}
	if sessionOf(t, sessions, a.ID()).closed.Load() || sessionOf(t, sessions, c.ID()).closed.Load() {
		t.Error("a session other than the oldest idle one was closed")
	}

	// With both sessions busy, nothing can be evicted: a new session is refused.
	for _, cs := range []*mcp.ClientSession{a, c} {
		fs := sessionOf(t, sessions, cs.ID())
		fs.slowIn = make(chan struct{})
		go func() { _, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow"}) }()
		<-fs.slowIn
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	resp, body := post(t, url, init, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "too many MCP sessions: all 2 are busy") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("initialize with every session busy = %d %s", resp.StatusCode, body)
	}
	if n := len(sessions.all()); n != 3 {
		t.Errorf("%d core sessions opened, want 3 (none for the refused initialize)", n)
	}
}

// TestDeleteEndsCallsInProgress: a DELETE of a session with a call in progress answers at once.
func TestDeleteEndsCallsInProgress(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{})
	ts := httpServer(t, srv)
	cs, _ := connectHTTP(t, ts.URL+"/mcp")
	fs := sessionOf(t, sessions, cs.ID())
	fs.slowIn = make(chan struct{})
	go func() { _, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow"}) }()
	<-fs.slowIn
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, ts.URL+"/mcp", nil)
	req.Header.Set(sessionHeader, cs.ID())
	done := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	select {
	case code := <-done:
		if code != http.StatusNoContent {
			t.Errorf("DELETE = %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("DELETE waited for the call in progress")
	}
	waitUntil(t, "the core session to be closed", fs.closed.Load)
}

// endsOnCancel cancels the context of a ServeStdio whose result served carries, and fails the
// test unless it returns nil within five seconds while its input stays open.
func endsOnCancel(t *testing.T, cancel context.CancelFunc, served <-chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return after its context ended while the input stayed open")
	}
}

// TestIdleSessionEndsCallsInProgress: a client that goes away in the middle of a call, without
// cancelling it, leaves a session whose idle timeout still closes it, ending the call, which
// closing the SDK session would otherwise wait for without end.
func TestIdleSessionEndsCallsInProgress(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{SessionTimeout: 200 * time.Millisecond})
	ts := httpServer(t, srv)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	cs, _ := connectHTTP(t, ts.URL+"/mcp")
	fs := sessionOf(t, sessions, cs.ID())
	fs.slowIn = make(chan struct{})

	ctx, gone := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"slow"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(sessionHeader, cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-fs.slowIn
	gone()
	<-done
	waitUntil(t, "the idle session to be closed", fs.closed.Load)
	if err := callEcho(t, cs, "after the timeout"); err == nil {
		t.Error("the timed-out session still answers")
	}
}

// TestRefusedInitializeEvictsNoSession: at the cap, an initialize the SDK refuses (an Accept it
// does not serve, a protocol version it does not know, params that are not an initialize's)
// opens no session, so it must not evict the session idle longest either.
func TestRefusedInitializeEvictsNoSession(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{MaxSessions: 1})
	ts := httpServer(t, srv)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	url := ts.URL + "/mcp"
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	resp, _ := post(t, url, init, nil)
	id := resp.Header.Get(sessionHeader)
	if id == "" {
		t.Fatalf("initialize = %d, no session", resp.StatusCode)
	}
	listed := func() int {
		resp, _ := post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{sessionHeader: id, "Mcp-Protocol-Version": "2025-11-25"})
		return resp.StatusCode
	}
	refused := []struct {
		name, body string
		header     map[string]string
	}{
		{"accept", init, map[string]string{"Accept": "text/plain"}},
		{"protocol version header", init, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":5}`, nil},
	}
	for _, tt := range refused {
		post(t, url, tt.body, tt.header)
		if got := listed(); got != http.StatusOK {
			t.Fatalf("after an initialize refused for its %s, the open session answers %d, want 200", tt.name, got)
		}
	}
	// A real one still takes the place of the idle session.
	if resp, _ := post(t, url, init, nil); resp.Header.Get(sessionHeader) == "" {
		t.Fatalf("initialize at the cap = %d, no session", resp.StatusCode)
	}
	waitUntil(t, "the idle session to be evicted", func() bool { return sessionOf(t, sessions, id).closed.Load() })
}
