package mcpserve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpServer serves srv's handler behind the gateway routing on a loopback test server.
func httpServer(t *testing.T, srv *Server, health func(context.Context) error) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(NewHTTPHandler(srv.Handler(), health))
	t.Cleanup(func() {
		_ = srv.Close() // ends the sessions, and with them their open streams
		ts.Close()
	})
	return ts
}

func connectHTTP(t *testing.T, url string) (*mcp.ClientSession, chan string) {
	t.Helper()
	changed := make(chan string, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- "tools" },
	})
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, changed
}

func TestHTTPSessionsAreSeparate(t *testing.T) {
	checkLeaks(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{})
	ts := httpServer(t, srv, nil)

	a, aChanged := connectHTTP(t, ts.URL+"/mcp")
	b, _ := connectHTTP(t, ts.URL+"/mcp")
	if a.ID() == "" || a.ID() == b.ID() {
		t.Fatalf("session ids %q and %q", a.ID(), b.ID())
	}
	if _, err := a.CallTool(t.Context(), &mcp.CallToolParams{Name: "activate", Arguments: map[string]any{"name": "only_a"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-aChanged:
	case <-time.After(30 * time.Second):
		t.Fatal("session a got no tools/list_changed")
	}
	if got := toolNames(t, a); !slices.Contains(got, "only_a") {
		t.Errorf("session a tools = %v", got)
	}
	if got := toolNames(t, b); slices.Contains(got, "only_a") {
		t.Errorf("session b sees a's activation: %v", got)
	}
	res, err := b.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "from b"}})
	if err != nil || textOf(res) != "echo: from b" {
		t.Errorf("b echo = %v, %v", res, err)
	}

	// Ending a session over HTTP (DELETE) closes its core session.
	_ = a.Close()
	waitUntil(t, "session a to be closed", func() bool {
		for _, s := range sessions.all() {
			if s.id == a.ID() {
				return s.closed.Load()
			}
		}
		return false
	})
	if n := len(sessions.all()); n != 2 {
		t.Errorf("%d sessions opened, want 2 (no session for requests that do not start one)", n)
	}
}

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

func TestHTTPBadRequests(t *testing.T) {
	checkLeaks(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{MaxMessageBytes: 1024})
	ts := httpServer(t, srv, func(context.Context) error { return nil })
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	url := ts.URL + "/mcp"

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	tests := []struct {
		name   string
		body   string
		header map[string]string
		status int
		want   string
	}{
		{"oversized", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`, nil, http.StatusRequestEntityTooLarge, "exceeds"},
		{"malformed json", `{"jsonrpc":`, nil, http.StatusBadRequest, ""},
		{"unknown session", init, map[string]string{"Mcp-Session-Id": "nope"}, http.StatusNotFound, "session not found"},
		{"initialize refused", init, map[string]string{"Accept": "text/plain"}, http.StatusBadRequest, "Accept must contain"},
		{"not initialize", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, http.StatusOK, "invalid during session initialization"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, url, tt.body, tt.header)
			if resp.StatusCode != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("status %d body %q, want %d containing %q", resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
	// Only the refused initialize opened a session, and it closed it again.
	if n := len(sessions.all()); n != 1 {
		t.Errorf("%d sessions opened, want 1", n)
	}
	waitUntil(t, "refused requests to release their sessions", func() bool {
		for _, s := range sessions.all() {
			if !s.closed.Load() {
				return false
			}
		}
		return true
	})

	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `{"status":"ok"}` {
		t.Errorf("healthz = %d %s", resp.StatusCode, body)
	}

	sessions.openErr = errors.New("store down")
	resp, body2 := post(t, url, init, nil)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body2, "opening session: store down") {
		t.Errorf("initialize with a failing Open = %d %s", resp.StatusCode, body2)
	}
}

func TestHealthzUnhealthy(t *testing.T) {
	h := NewHTTPHandler(http.NotFoundHandler(), func(context.Context) error { return errors.New("hub not started") })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "hub not started") {
		t.Errorf("healthz = %d %s", rec.Code, rec.Body)
	}
}

func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr, token string
		wantErr     error
	}{
		{"127.0.0.1:8787", "", nil},
		{"localhost:0", "", nil},
		{"[::1]:8787", "", nil},
		{"0.0.0.0:8787", "", ErrTokenRequired},
		{":8787", "", ErrTokenRequired},
		{"192.0.2.1:8787", "", ErrTokenRequired},
		{"0.0.0.0:8787", "s3cret", nil},
	}
	for _, tt := range tests {
		if err := CheckListen(tt.addr, tt.token); !errors.Is(err, tt.wantErr) {
			t.Errorf("CheckListen(%q, %q) = %v, want %v", tt.addr, tt.token, err, tt.wantErr)
		}
	}
	if err := CheckListen("no-port", ""); err == nil {
		t.Error("an address without a port was accepted")
	}
	if err := ListenAndServe(t.Context(), "0.0.0.0:0", "", http.NotFoundHandler()); !errors.Is(err, ErrTokenRequired) {
		t.Errorf("ListenAndServe beyond loopback without a token = %v", err)
	}
}

func TestServeListenerWithToken(t *testing.T) {
	checkLeaks(t)
	srv := New(newFakeSessions(), Options{})
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- ServeListener(ctx, ln, "s3cret", NewHTTPHandler(srv.Handler(), nil)) }()
	base := "http://" + ln.Addr().String()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	get := func(path, auth string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get("/healthz", ""); got != http.StatusOK {
		t.Errorf("healthz without a token = %d, want 200", got)
	}
	if got := get("/mcp", ""); got != http.StatusUnauthorized {
		t.Errorf("/mcp without a token = %d, want 401", got)
	}
	if got := get("/mcp", "Bearer wrong"); got != http.StatusUnauthorized {
		t.Errorf("/mcp with a wrong token = %d, want 401", got)
	}
	// With the token the request reaches the MCP handler (which wants a session for GET).
	if got := get("/mcp", "Bearer s3cret"); got != http.StatusBadRequest {
		t.Errorf("/mcp with the token = %d, want the MCP handler's 400", got)
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: &bearer{tr, "s3cret"}}}, nil)
	if err != nil {
		t.Fatalf("connecting with the token: %v", err)
	}
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "authorized"}}); err != nil || textOf(res) != "echo: authorized" {
		t.Errorf("echo = %v, %v", res, err)
	}
	_ = cs.Close()
	cancel()
	if err := <-served; err != nil {
		t.Errorf("ServeListener after cancel = %v", err)
	}
}

type bearer struct {
	base  http.RoundTripper
	token string
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}
