package mcpserve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// httpServer serves srv's handler at /mcp on a loopback test server.
func httpServer(t *testing.T, srv *Server) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	ts := httptest.NewServer(mux)
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
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{})
	ts := httpServer(t, srv)

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
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{MaxMessageBytes: 1024})
	ts := httpServer(t, srv)
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
		{"not initialize", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, http.StatusBadRequest,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: method \"tools/list\" before initialize`},
		{"batched initialize", "[" + init + "]", nil, http.StatusBadRequest, `"code":-32600,"message":"invalid request: initialize must be sent alone, not in a batch"`},
		{"batched initialize in a session", " \n[" + init + "]", map[string]string{"Mcp-Session-Id": "any"}, http.StatusBadRequest, "initialize must be sent alone"},
		{"batch of calls", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, nil, http.StatusBadRequest, `"code":-32600,"message":"invalid request: a batch of calls before initialize`},
		{"ping before initialize", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil, http.StatusOK, `"id":3,"result":{}`},
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

	sessions.openErr = errors.New("store down")
	resp, body2 := post(t, url, init, nil)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body2, "opening session: store down") {
		t.Errorf("initialize with a failing Open = %d %s", resp.StatusCode, body2)
	}
}

// TestHTTPSessionsStayUnderTheCap: an initialize the SDK reads but a plain reading of the body
// would not (data after the JSON value, keys in another case) must not open a session outside
// Options.MaxSessions, one that the cap, eviction and Close know nothing of.
func TestHTTPSessionsStayUnderTheCap(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{MaxSessions: 1})
	ts := httpServer(t, srv)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	url := ts.URL + "/mcp"

	params := `"params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize",` + params + `}`
	bodies := []string{
		init,
		init + " x",
		init + "{}",
		init + init,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","ID":null,"Method":"notifications/x",` + params + `}`,
		init,
	}
	var ids []string
	for _, body := range bodies {
		resp, out := post(t, url, body, nil)
		if id := resp.Header.Get(sessionHeader); id != "" {
			ids = append(ids, id)
		} else if resp.StatusCode == http.StatusOK {
			t.Errorf("%s: answered %s without a session", body, out)
		}
	}
	var live []string
	for _, id := range ids {
		resp, _ := post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			map[string]string{sessionHeader: id, "Mcp-Protocol-Version": "2025-11-25"})
		if resp.StatusCode == http.StatusOK {
			live = append(live, id)
		}
	}
	if len(live) != 1 || live[0] != ids[len(ids)-1] {
		t.Errorf("sessions answering: %d of %d opened (%v), want only the last one under a cap of 1", len(live), len(ids), live)
	}
}

// TestHTTPErrorsHaveCodes: an error of a handler in a session (a second initialize, a tool result
// that is not MCP content) reaches an HTTP client with a JSON-RPC error code, as it reaches a
// stdio client, not with the SDK's code 0.
func TestHTTPErrorsHaveCodes(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{})
	ts := httpServer(t, srv)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	url := ts.URL + "/mcp"
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	resp, _ := post(t, url, init, nil)
	h := map[string]string{sessionHeader: resp.Header.Get(sessionHeader), "Mcp-Protocol-Version": "2025-11-25"}
	post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)

	tests := []struct {
		name, body, want string
	}{
		{"second initialize", strings.Replace(init, `"id":1`, `"id":2`, 1),
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"duplicate \"initialize\" received"}}`},
		{"result that is not MCP content", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bogus"}}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"tool result content is not valid MCP content`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, body := post(t, url, tt.body, h)
			if !strings.Contains(body, tt.want) {
				t.Errorf("answer %q, want it to contain %q", body, tt.want)
			}
		})
	}
}

// TestHTTPCrossOrigin: a request a browser sends from a page of another origin is refused with
// 403, whatever its method, before it opens a session or reaches one (the specification's
// Origin rule); a client of the same origin, or one that is not a browser, is served.
func TestHTTPCrossOrigin(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{})
	ts := httpServer(t, srv)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	url := ts.URL + "/mcp"
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	resp, _ := post(t, url, init, map[string]string{"Origin": ts.URL, "Sec-Fetch-Site": "same-origin"})
	id := resp.Header.Get(sessionHeader)
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("same-origin initialize = %d, session %q", resp.StatusCode, id)
	}
	const refused = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: cross-origin requests are refused"}}` + "\n"
	tests := []struct {
		name, method string
		header       map[string]string
	}{
		{"initialize from another origin", http.MethodPost, map[string]string{"Origin": "https://evil.example"}},
		{"initialize from another port", http.MethodPost, map[string]string{"Origin": "http://127.0.0.1:1"}},
		{"an opaque origin", http.MethodPost, map[string]string{"Origin": "null"}},
		{"a cross-site fetch", http.MethodPost, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"a same-site fetch", http.MethodPost, map[string]string{"Sec-Fetch-Site": "same-site", "Origin": ts.URL}},
		{"a call in the session", http.MethodPost, map[string]string{"Origin": "https://evil.example", sessionHeader: id}},
		{"the session's event stream", http.MethodGet, map[string]string{"Origin": "https://evil.example", sessionHeader: id}},
		{"ending the session", http.MethodDelete, map[string]string{"Origin": "https://evil.example", sessionHeader: id}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := init
			if tt.header[sessionHeader] != "" {
				body = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
			}
			// A hang guard: served, the event stream would stay open.
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, tt.method, url, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || string(got) != refused {
				t.Errorf("= %d %s, want 403 %s", resp.StatusCode, got, refused)
			}
		})
	}
	if n := len(sessions.all()); n != 1 {
		t.Errorf("%d core sessions opened, want 1 (none for a refused request)", n)
	}
	// The session lives on, and a client that is not a browser is served as before.
	resp, body := post(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, map[string]string{sessionHeader: id, "Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Errorf("tools/list after the refusals = %d %s", resp.StatusCode, body)
	}
}
