package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/leaktest"
)

// mcpStub stands for the MCP handler: the gateway only routes to it.
var mcpStub = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "mcp "+r.Method) })

func report(servers ...gateway.ServerHealth) func(context.Context) ([]gateway.ServerHealth, error) {
	return func(context.Context) ([]gateway.ServerHealth, error) { return servers, nil }
}

func TestHealthz(t *testing.T) {
	ready := gateway.ServerHealth{Name: "everything", State: "ready", Tools: 13, Up: true}
	off := gateway.ServerHealth{Name: "old", State: "disabled", Up: true}
	down := gateway.ServerHealth{Name: "broken", State: "down", LastError: "exit status 1"}
	tests := []struct {
		name   string
		health func(context.Context) ([]gateway.ServerHealth, error)
		code   int
		body   string
	}{
		{"no servers", nil, http.StatusOK, `{"status":"ok","servers":{}}`},
		{"every server up", report(ready, off), http.StatusOK,
			`{"status":"ok","servers":{"everything":{"state":"ready","tools":13},"old":{"state":"disabled","tools":0}}}`},
		{"a server down", report(ready, down), http.StatusOK,
			`{"status":"degraded","servers":{"broken":{"state":"down","tools":0,"lastError":"exit status 1"},"everything":{"state":"ready","tools":13}}}`},
		{"nodmix cannot serve", func(context.Context) ([]gateway.ServerHealth, error) {
			return nil, errors.New("state store: disk I/O error")
		},
			http.StatusServiceUnavailable, `{"status":"unavailable","error":"state store: disk I/O error"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			gateway.NewHandler(gateway.Routes{MCP: mcpStub, Health: tt.health}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if rec.Code != tt.code {
				t.Errorf("status %d, want %d", rec.Code, tt.code)
			}
			if diff := cmp.Diff(tt.body, strings.TrimSpace(rec.Body.String())); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	rec := httptest.NewRecorder()
	gateway.NewHandler(gateway.Routes{MCP: mcpStub}).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	if rec.Body.String() != "mcp POST" {
		t.Errorf("/mcp not routed: %q", rec.Body)
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
		{"0.0.0.0:8787", "", gateway.ErrTokenRequired},
		{":8787", "", gateway.ErrTokenRequired},
		{"192.0.2.1:8787", "", gateway.ErrTokenRequired},
		{"0.0.0.0:8787", "s3cret", nil},
	}
	for _, tt := range tests {
		if err := gateway.CheckListen(tt.addr, tt.token); !errors.Is(err, tt.wantErr) {
			t.Errorf("CheckListen(%q, %q) = %v, want %v", tt.addr, tt.token, err, tt.wantErr)
		}
	}
	if err := gateway.CheckListen("no-port", ""); err == nil {
		t.Error("an address without a port was accepted")
	}
	if _, err := gateway.Listen("0.0.0.0:0", ""); !errors.Is(err, gateway.ErrTokenRequired) {
		t.Errorf("Listen beyond loopback without a token = %v", err)
	}
}

func TestListenBusyPort(t *testing.T) {
	ln, err := gateway.Listen("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = gateway.Listen(ln.Addr().String(), "")
	if !errors.Is(err, gateway.ErrAddressInUse) {
		t.Fatalf("Listen on a busy port = %v, want ErrAddressInUse", err)
	}
	want := "listen on " + ln.Addr().String() + ": address already in use: another process (another gateway?) listens there; stop it or choose another address with --listen or gateway.listen"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

// serveOn runs ServeListener on a loopback port and returns its address; the server stops at the
// end of the test.
func serveOn(t *testing.T, token string, h http.Handler, lim gateway.Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- gateway.ServeListener(ctx, ln, token, h, lim) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeListener after cancel = %v", err)
		}
	})
	return ln.Addr().String()
}

func TestServeListenerWithToken(t *testing.T) {
	leaktest.Check(t)
	servers := func(context.Context) any { return []map[string]any{{"name": "everything", "state": "ready"}} }
	h := gateway.NewHandler(gateway.Routes{MCP: mcpStub, Health: report(gateway.ServerHealth{Name: "everything", State: "ready", Up: true}), Servers: servers})
	base := "http://" + serveOn(t, "s3cret", h, gateway.Limits{})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	get := func(path, auth string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	full := `{"status":"ok","servers":{"everything":{"state":"ready","tools":0}}}`
	tests := []struct {
		path, auth string
		code       int
		body       string // when set, the whole body
	}{
		{"/healthz", "", http.StatusOK, `{"status":"ok"}`},
		{"/healthz", "Bearer wrong", http.StatusOK, `{"status":"ok"}`},
		{"/healthz", "Bearer s3cret", http.StatusOK, full},
		{"/mcp", "", http.StatusUnauthorized, ""},
		{"/mcp", "Bearer wrong", http.StatusUnauthorized, ""},
		{"/mcp", "Basic s3cret", http.StatusUnauthorized, ""},
		{"/mcp", "s3cret", http.StatusUnauthorized, ""},
		{"/mcp", "Bearers3cret", http.StatusUnauthorized, ""},
		{"/mcp", "Bearer s3cret2", http.StatusUnauthorized, ""},
		{"/mcp", "Bearer s3cret", http.StatusOK, "mcp GET"},
		{"/mcp", "bearer s3cret", http.StatusOK, "mcp GET"}, // RFC 7235: the scheme is case-insensitive
		{"/mcp", "BEARER  s3cret", http.StatusOK, "mcp GET"},
		{"/mcp/servers", "", http.StatusUnauthorized, ""},
		{"/mcp/servers", "Bearer s3cret", http.StatusOK, `[{"name":"everything","state":"ready"}]`},
	}
	for _, tt := range tests {
		code, body := get(tt.path, tt.auth)
		if code != tt.code || (tt.body != "" && body != tt.body) {
			t.Errorf("GET %s (%q) = %d %s, want %d %s", tt.path, tt.auth, code, body, tt.code, tt.body)
		}
	}
}

// closedWithin reads from c until the server closes it, at most limit, and returns how long
// that took and what was read.
func closedWithin(c net.Conn, limit time.Duration) (time.Duration, string, error) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(limit))
	data, err := io.ReadAll(c)
	if errors.Is(err, syscall.ECONNRESET) {
		// The server closed with the client's bytes unread, and a byte sent after that drew a
		// reset: closed all the same, and what it sent before the close was read already.
		err = nil
	}
	return time.Since(start), string(data), err
}

// TestSlowBodyIsCut: a body trickled in byte by byte does not hold the connection beyond the
// read deadline.
func TestSlowBodyIsCut(t *testing.T) {
	leaktest.Check(t)
	read := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		read <- err
		if err != nil {
			http.Error(w, "body too slow", http.StatusRequestTimeout)
			return
		}
		io.WriteString(w, "read it all")
	})
	addr := serveOn(t, "", h, gateway.Limits{Read: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /slow HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n\r\n", addr)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for range 1000 {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
		}
	}()
	took, resp, err := closedWithin(c, 10*time.Second)
	if err != nil {
		t.Fatalf("connection still open after %s: %v", took, err)
	}
	if err := <-read; err == nil {
		t.Error("the handler read the whole trickled body")
	}
	if !strings.HasPrefix(resp, "HTTP/1.1 408") {
		t.Errorf("response %q", resp)
	}
}

// TestIdleConnectionIsClosed: a keep-alive connection without a request is closed.
func TestIdleConnectionIsClosed(t *testing.T) {
	leaktest.Check(t)
	addr := serveOn(t, "", gateway.NewHandler(gateway.Routes{MCP: mcpStub}), gateway.Limits{Idle: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(10 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle keep-alive connection: read = %v after %s, want EOF", err, time.Since(start))
	}
}

// TestStreamsOutliveEveryLimit: a streamed response to a POST (the chat completions stream) and
// to a GET (an MCP event stream with quiet spells) run longer than every limit, uncut.
func TestStreamsOutliveEveryLimit(t *testing.T) {
	leaktest.Check(t)
	const events = 8
	lim := gateway.Limits{ReadHeader: 200 * time.Millisecond, Read: 200 * time.Millisecond, Idle: 200 * time.Millisecond, Write: 200 * time.Millisecond}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		quiet := 100 * time.Millisecond
		if r.Method == http.MethodGet {
			quiet = 350 * time.Millisecond // longer than the write limit, between writes
		}
		for i := range events {
			fmt.Fprintf(w, "data: %d %s\n\n", i, body)
			f.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(quiet):
			}
		}
	})
	addr := serveOn(t, "", h, lim)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			var body io.Reader
			if method == http.MethodPost {
				body = strings.NewReader(`{"stream":true}`)
			}
			req, _ := http.NewRequestWithContext(t.Context(), method, "http://"+addr+"/v1/chat/completions", body)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("stream cut: %v after %q", err, data)
			}
			if got := strings.Count(string(data), "data: "); got != events {
				t.Errorf("%d of %d events arrived: %q", got, events, data)
			}
		})
	}
}

// TestStalledReaderIsCut: a client that stops reading a response does not hold the handler.
func TestStalledReaderIsCut(t *testing.T) {
	leaktest.Check(t)
	wrote := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 4096 { // 256 MiB: more than any socket buffer
			if _, err := w.Write(chunk); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	})
	addr := serveOn(t, "", h, gateway.Limits{Write: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /big HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	select {
	case err := <-wrote:
		if err == nil {
			t.Error("the whole response was written to a client that reads nothing")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler is still writing to a client that stopped reading")
	}
}

// TestHealthzWithoutTheTokenTellsOnlyTheStatus: a gateway with a token answers /healthz to a
// caller without it with the status alone, also when nodmix cannot serve: the store's error
// names its file.
func TestHealthzWithoutTheTokenTellsOnlyTheStatus(t *testing.T) {
	failing := func(context.Context) ([]gateway.ServerHealth, error) {
		return nil, errors.New("state store: open /home/someone/.local/state/nodmix/state.db: disk I/O error")
	}
	h := gateway.RequireToken("s3cret", gateway.NewHandler(gateway.Routes{MCP: mcpStub, Health: failing}))
	tests := []struct {
		auth, body string
	}{
		{"", `{"status":"unavailable"}`},
		{"Bearer wrong", `{"status":"unavailable"}`},
		{"Bearer s3cret", `{"status":"unavailable","error":"state store: open /home/someone/.local/state/nodmix/state.db: disk I/O error"}`},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%q: status %d", tt.auth, rec.Code)
		}
		if diff := cmp.Diff(tt.body, strings.TrimSpace(rec.Body.String())); diff != "" {
			t.Errorf("%q: body (-want +got):\n%s", tt.auth, diff)
		}
	}
}
