package gateway_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/gateway"
)

// mcpStub stands for the MCP handler: the gateway only routes to it.
var mcpStub = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "mcp "+r.Method) })

func TestHealthz(t *testing.T) {
	tests := []struct {
		health func(context.Context) error
		code   int
		body   string
	}{
		{nil, http.StatusOK, `{"status":"ok"}`},
		{func(context.Context) error { return errors.New("hub not started") }, http.StatusServiceUnavailable, "hub not started"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		gateway.NewHandler(mcpStub, tt.health).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.body) {
			t.Errorf("healthz = %d %s, want %d %s", rec.Code, rec.Body, tt.code, tt.body)
		}
	}
	rec := httptest.NewRecorder()
	gateway.NewHandler(mcpStub, nil).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
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
	if err := gateway.ListenAndServe(t.Context(), "0.0.0.0:0", "", mcpStub); !errors.Is(err, gateway.ErrTokenRequired) {
		t.Errorf("ListenAndServe beyond loopback without a token = %v", err)
	}
}

func TestServeListenerWithToken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- gateway.ServeListener(ctx, ln, "s3cret", gateway.NewHandler(mcpStub, nil)) }()
	base := "http://" + ln.Addr().String()
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
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		path, auth string
		code       int
	}{
		{"/healthz", "", http.StatusOK},
		{"/mcp", "", http.StatusUnauthorized},
		{"/mcp", "Bearer wrong", http.StatusUnauthorized},
		{"/mcp", "Bearer s3cret", http.StatusOK},
	}
	for _, tt := range tests {
		if code, body := get(tt.path, tt.auth); code != tt.code {
			t.Errorf("GET %s (%q) = %d %s, want %d", tt.path, tt.auth, code, body, tt.code)
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("ServeListener after cancel = %v", err)
	}
}
