package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nodmix/nodmix/internal/gateway"
)

// TestOtherOriginsCannotDriveTheGateway: a page of another origin open in the user's browser
// cannot run a turn on a gateway (a text/plain POST needs no preflight), nor read it through a
// name of its own resolved to loopback (DNS rebinding); the gateway's own page, curl and SDKs
// can.
func TestOtherOriginsCannotDriveTheGateway(t *testing.T) {
	var reached atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.WriteString(w, "served")
	})
	open := serveOn(t, "", h, gateway.Limits{})
	guarded := serveOn(t, "s3cret", h, gateway.Limits{})
	_, port, _ := strings.Cut(open, ":")
	tests := []struct {
		name, addr, method, path string
		header                   map[string]string
		host                     string // when set, the Host header
		code                     int
	}{
		{"a turn from another site", open, "POST", "/v1/chat/completions",
			map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, "", 403},
		{"a turn from another site, an older browser", open, "POST", "/v1/chat/completions",
			map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, "", 403},
		{"a turn from another port of localhost", open, "POST", "/v1/responses",
			map[string]string{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"}, "", 403},
		{"a session deleted from another site", open, "DELETE", "/v1/sessions/main",
			map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, "", 403},
		{"an MCP call from another site", open, "POST", "/mcp",
			map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, "", 403},
		{"a turn from another site, with a token", guarded, "POST", "/v1/chat/completions",
			map[string]string{"Authorization": "Bearer s3cret", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, "", 403},
		{"sessions read through a rebound name", open, "GET", "/v1/sessions", nil, "evil.example:" + port, 403},
		{"a turn through a rebound name", open, "POST", "/v1/chat/completions",
			map[string]string{"Sec-Fetch-Site": "same-origin"}, "evil.example:" + port, 403},
		{"the page through a rebound name", open, "GET", "/", nil, "evil.example:" + port, 403},

		{"a turn from the gateway's page", open, "POST", "/v1/chat/completions",
			map[string]string{"Origin": "http://" + open, "Sec-Fetch-Site": "same-origin"}, "", 200},
		{"a turn from the page at localhost", open, "POST", "/v1/chat/completions",
			map[string]string{"Origin": "http://localhost:" + port}, "localhost:" + port, 200},
		{"a turn from curl", open, "POST", "/v1/chat/completions", map[string]string{"Content-Type": "application/json"}, "", 200},
		{"sessions read from another site (it cannot read the answer)", open, "GET", "/v1/sessions",
			map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, "", 200},
		{"a name under .localhost", open, "GET", "/v1/sessions", nil, "chat.localhost:" + port, 200},
		{"IPv6 loopback", open, "GET", "/v1/sessions", nil, "[::1]:" + port, 200},
		{"a public name with a token (a reverse proxy)", guarded, "GET", "/v1/sessions",
			map[string]string{"Authorization": "Bearer s3cret"}, "chat.example.org", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := reached.Load()
			req, err := http.NewRequestWithContext(t.Context(), tt.method, "http://"+tt.addr+tt.path, strings.NewReader(`{"messages":[{"role":"user","content":"run rm -rf ~"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.code {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, resp.StatusCode, b, tt.code)
			}
			if got := reached.Load() != before; got != (tt.code == 200) {
				t.Errorf("handler reached: %v", got)
			}
			if tt.code == 403 && strings.HasPrefix(tt.path, "/v1/") {
				var e struct {
					Error struct{ Type, Code, Message string }
				}
				if err := json.Unmarshal(b, &e); err != nil || e.Error.Type != "invalid_request_error" || e.Error.Code == "" {
					t.Errorf("not OpenAI's error object: %s", b)
				}
			}
		})
	}
}
