package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/webchat"
)

// sessionsServer serves the API over a real app whose default model is the scripted one, behind
// the bearer token when token is set.
func sessionsServer(t *testing.T, token string) *httptest.Server {
	t.Helper()
	home := t.TempDir()
	cfg := `{agents: {defaults: {model: "scripted/demo"}}}`
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "NODMIX_HOME" || k == "HOME" {
			return home
		}
		return ""
	}
	a, err := app.New(context.Background(), app.Options{Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gateway.RequireToken(token, gateway.WithAPI(http.NotFoundHandler(), &gateway.API{Agent: a})))
	t.Cleanup(func() { srv.Close(); a.Close() })
	return srv
}

type sessCall struct {
	method, path, body, token string
}

func sessDo(t *testing.T, srv *httptest.Server, c sessCall) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, _ := http.NewRequest(c.method, srv.URL+c.path, body)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

type sessRow struct {
	Key            string            `json:"key"`
	Model          string            `json:"model"`
	ModelPinned    bool              `json:"modelPinned"`
	Overrides      map[string]string `json:"overrides"`
	ThinkingLevels []struct {
		ID    string `json:"id"`
		Label string `json:"label"`
	} `json:"thinkingLevels"`
	ThinkingOptions []string `json:"thinkingOptions"`
	ThinkingDefault string   `json:"thinkingDefault"`
	ThinkingMenu    []struct {
		Value    string `json:"value"`
		Label    string `json:"label"`
		Selected bool   `json:"selected"`
	} `json:"thinkingMenu"`
	Levels struct {
		Thinking, Fast, Verbose, Trace, Reasoning string
	} `json:"levels"`
	Messages   int `json:"messages"`
	Transcript []struct {
		Role  string `json:"role"`
		Parts []struct {
			Kind, Text string
		} `json:"parts"`
	} `json:"transcript"`
	Economy struct {
		ModelCalls int `json:"modelCalls"`
		Tokenjuice *struct {
			SavedChars int `json:"savedChars"`
		} `json:"tokenjuice"`
	} `json:"economy"`
}

func sessDecode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

func TestSessionsLifecycle(t *testing.T) {
	srv := sessionsServer(t, "")
	resp, b := sessDo(t, srv, sessCall{method: "GET", path: "/v1/sessions"})
	list := sessDecode[struct {
		Object   string    `json:"object"`
		Data     []sessRow `json:"data"`
		Defaults sessRow   `json:"defaults"`
	}](t, b)
	if resp.StatusCode != 200 || list.Object != "list" || list.Data == nil || len(list.Data) != 0 {
		t.Fatalf("empty list = %d %s", resp.StatusCode, b)
	}
	if list.Defaults.Model != "scripted/demo" || list.Defaults.ThinkingDefault != "medium" || list.Defaults.ThinkingMenu[0].Label != "Inherited: medium" {
		t.Errorf("defaults = %+v", list.Defaults)
	}

	// A PATCH creates the session and writes the override at once.
	resp, b = sessDo(t, srv, sessCall{method: "PATCH", path: "/v1/sessions/web-1", body: `{"thinking":"high","verboseLevel":"on"}`})
	row := sessDecode[sessRow](t, b)
	if resp.StatusCode != 200 || row.Key != "web-1" || row.Levels.Thinking != "high" {
		t.Fatalf("patch = %d %s", resp.StatusCode, b)
	}
	if diff := cmp.Diff(map[string]string{"thinking": "high", "verbose": "on"}, row.Overrides); diff != "" {
		t.Errorf("overrides (-want +got):\n%s", diff)
	}

	// A turn on the session through the chat API, then the row and transcript.
	req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set(gateway.SessionHeader, "web-1")
	cr, err := srv.Client().Do(req)
	if err != nil || cr.StatusCode != 200 {
		t.Fatalf("chat: %v %v", err, cr)
	}
	cr.Body.Close()
	resp, b = sessDo(t, srv, sessCall{method: "GET", path: "/v1/sessions/web-1"})
	row = sessDecode[sessRow](t, b)
	if resp.StatusCode != 200 || row.Messages != 2 || len(row.Transcript) != 2 || row.Transcript[1].Parts[1].Text != "You said: hi" {
		t.Errorf("session = %d %s", resp.StatusCode, b)
	}
	if row.Economy.ModelCalls != 1 || row.Economy.Tokenjuice == nil {
		t.Errorf("economy = %+v", row.Economy)
	}
	var selected string
	for _, c := range row.ThinkingMenu {
		if c.Selected {
			selected = c.Label
		}
	}
	if selected != "Override: high" {
		t.Errorf("selected = %q", selected)
	}

	// null clears; a boolean is a fast mode; a model pin changes the profile.
	_, b = sessDo(t, srv, sessCall{method: "PATCH", path: "/v1/sessions/web-1", body: `{"thinking":null,"fast":true,"model":"zai/glm-4.6"}`})
	row = sessDecode[sessRow](t, b)
	if diff := cmp.Diff(map[string]string{"fast": "on", "verbose": "on"}, row.Overrides); diff != "" {
		t.Errorf("overrides (-want +got):\n%s", diff)
	}
	if !row.ModelPinned || row.Model != "zai/glm-4.6" || cmp.Diff([]string{"off", "on"}, row.ThinkingOptions) != "" ||
		row.ThinkingLevels[1].ID != "low" || row.ThinkingMenu[2].Label != "Override: on" {
		t.Errorf("binary profile row = %s", b)
	}

	// Escaped slashes are part of the key.
	resp, _ = sessDo(t, srv, sessCall{method: "PATCH", path: "/v1/sessions/team%2Falice", body: `{}`})
	if resp.StatusCode != 200 {
		t.Errorf("patch of a key with a slash = %d", resp.StatusCode)
	}
	_, b = sessDo(t, srv, sessCall{method: "GET", path: "/v1/sessions"})
	if !strings.Contains(string(b), `"key":"team/alice"`) {
		t.Errorf("key with a slash not listed: %s", b)
	}

	resp, b = sessDo(t, srv, sessCall{method: "DELETE", path: "/v1/sessions/web-1"})
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"deleted":true`) {
		t.Errorf("delete = %d %s", resp.StatusCode, b)
	}
	for _, c := range []sessCall{{method: "DELETE", path: "/v1/sessions/web-1"}, {method: "GET", path: "/v1/sessions/web-1"}} {
		resp, b = sessDo(t, srv, c)
		if e := sessDecode[apiErr](t, b); resp.StatusCode != 404 || e.Error.Code != "session_not_found" {
			t.Errorf("%s after delete = %d %s", c.method, resp.StatusCode, b)
		}
	}
}

func TestSessionsRefuseBadRequests(t *testing.T) {
	srv := sessionsServer(t, "")
	long := strings.Repeat("k", 300)
	tests := []struct {
		name    string
		c       sessCall
		status  int
		code    string
		param   string
		options []string // a subset the error must list
	}{
		{"not JSON", sessCall{"PATCH", "/v1/sessions/s", `{thinking:`, ""}, 400, "invalid_value", "", nil},
		{"not an object", sessCall{"PATCH", "/v1/sessions/s", `["thinking"]`, ""}, 400, "invalid_value", "", nil},
		{"a bare value", sessCall{"PATCH", "/v1/sessions/s", `"high"`, ""}, 400, "invalid_value", "", nil},
		{"unknown key", sessCall{"PATCH", "/v1/sessions/s", `{"thinking":"high","thinkingOnce":"high"}`, ""}, 400, "unknown_field", "thinkingOnce", []string{"thinking", "model"}},
		{"wrong type", sessCall{"PATCH", "/v1/sessions/s", `{"verbose":true}`, ""}, 400, "invalid_value", "verbose", nil},
		{"number for fast", sessCall{"PATCH", "/v1/sessions/s", `{"fast":1}`, ""}, 400, "invalid_value", "fast", nil},
		{"object for model", sessCall{"PATCH", "/v1/sessions/s", `{"model":{}}`, ""}, 400, "invalid_value", "model", nil},
		{"alias and name", sessCall{"PATCH", "/v1/sessions/s", `{"thinking":"low","thinkingLevel":"high"}`, ""}, 400, "invalid_value", "thinkingLevel", nil},
		{"invalid level", sessCall{"PATCH", "/v1/sessions/s", `{"thinking":"big"}`, ""}, 400, "invalid_value", "thinking", []string{"default", "off", "high"}},
		{"unsupported level", sessCall{"PATCH", "/v1/sessions/s", `{"thinking":"max"}`, ""}, 400, "invalid_value", "thinking", []string{"high"}},
		{"invalid reasoning", sessCall{"PATCH", "/v1/sessions/s", `{"reasoning":"loud"}`, ""}, 400, "invalid_value", "reasoning", []string{"on", "off", "stream"}},
		{"unknown model", sessCall{"PATCH", "/v1/sessions/s", `{"model":"nope/x"}`, ""}, 400, "invalid_value", "model", []string{"scripted/demo"}},
		{"key too long", sessCall{"PATCH", "/v1/sessions/" + long, `{}`, ""}, 400, "invalid_session", "", nil},
		{"key with a control character", sessCall{"PATCH", "/v1/sessions/a%00b", `{}`, ""}, 400, "invalid_session", "", nil},
		{"key that is not UTF-8", sessCall{"PATCH", "/v1/sessions/a%FFb", `{}`, ""}, 400, "invalid_session", "", nil},
		{"empty key", sessCall{"GET", "/v1/sessions/", "", ""}, 400, "invalid_session", "", nil},
		{"missing", sessCall{"GET", "/v1/sessions/none", "", ""}, 404, "session_not_found", "", nil},
		{"delete missing", sessCall{"DELETE", "/v1/sessions/none", "", ""}, 404, "session_not_found", "", nil},
		{"other method", sessCall{"POST", "/v1/sessions/s", `{}`, ""}, 404, "not_found", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := sessDo(t, srv, tt.c)
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if got := resp.Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control = %q", got)
			}
			if tt.code == "" {
				return
			}
			e := sessDecode[apiErr](t, b)
			if e.Error.Code != tt.code || e.Error.Type != "invalid_request_error" || e.Error.Message == "" {
				t.Errorf("error = %s", b)
			}
			param := ""
			if e.Error.Param != nil {
				param = *e.Error.Param
			}
			if param != tt.param {
				t.Errorf("param = %q, want %q (%s)", param, tt.param, b)
			}
			for _, o := range tt.options {
				if !strings.Contains(strings.Join(e.Error.Options, ","), o) {
					t.Errorf("options %v lack %q", e.Error.Options, o)
				}
			}
		})
	}
	// Nothing refused was written.
	_, b := sessDo(t, srv, sessCall{method: "GET", path: "/v1/sessions"})
	if !strings.Contains(string(b), `"data":[]`) {
		t.Errorf("refused patches left sessions: %s", b)
	}
}

func TestSessionsNeedTheToken(t *testing.T) {
	srv := sessionsServer(t, "s3cret")
	for _, c := range []sessCall{
		{method: "GET", path: "/v1/sessions"},
		{method: "GET", path: "/v1/sessions/s"},
		{method: "PATCH", path: "/v1/sessions/s", body: `{"thinking":"high"}`},
		{method: "DELETE", path: "/v1/sessions/s"},
	} {
		for _, tok := range []string{"", "wrong"} {
			c.token = tok
			if resp, b := sessDo(t, srv, c); resp.StatusCode != 401 {
				t.Errorf("%s %s with token %q = %d %s", c.method, c.path, tok, resp.StatusCode, b)
			}
		}
	}
	resp, b := sessDo(t, srv, sessCall{method: "PATCH", path: "/v1/sessions/s", body: `{"thinking":"high"}`, token: "s3cret"})
	if resp.StatusCode != 200 {
		t.Fatalf("patch with the token = %d %s", resp.StatusCode, b)
	}
	for _, c := range []sessCall{{method: "GET", path: "/v1/sessions"}, {method: "GET", path: "/v1/sessions/s"}, {method: "DELETE", path: "/v1/sessions/s"}} {
		c.token = "s3cret"
		if resp, b := sessDo(t, srv, c); resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s with the token = %d %q %s", c.method, c.path, resp.StatusCode, resp.Header.Get("Cache-Control"), b)
		}
	}
}

func TestSessionsNeedASessionStore(t *testing.T) {
	srv := serve(t, &fakeAgent{result: answer("hi")})
	resp, b := post(t, srv.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("chat = %d %s", resp.StatusCode, b)
	}
	r, err := http.Get(srv.URL + "/v1/sessions")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotImplemented {
		t.Errorf("sessions on an agent without a store = %d", r.StatusCode)
	}
}

// The chat page is served without the token; what it calls is not.
func TestPageNeedsNoToken(t *testing.T) {
	h := gateway.RequireToken("s3cret", webchat.Mount(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "api")
	})))
	tests := []struct {
		method, path, auth string
		code               int
	}{
		{"GET", "/", "", 200},
		{"HEAD", "/", "", 200},
		{"GET", "/webchat/app.js", "", 200},
		{"POST", "/", "", 401},
		{"GET", "/v1/sessions", "", 401},
		{"GET", "/mcp", "", 401},
		{"GET", "/v1/sessions", "Bearer s3cret", 200},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.path, nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.code {
			t.Errorf("%s %s (%q) = %d, want %d", tt.method, tt.path, tt.auth, rec.Code, tt.code)
		}
	}
}

// TestAPIRefusesAWrongTokenAsOpenAIDoes: without the right token the API answers 401 with
// OpenAI's error object (what its clients read), and never the token it was sent.
func TestAPIRefusesAWrongTokenAsOpenAIDoes(t *testing.T) {
	srv := sessionsServer(t, "s3cret-gateway-token")
	for _, c := range []sessCall{
		{method: "POST", path: "/v1/chat/completions", body: `{"messages":[{"role":"user","content":"hi"}]}`},
		{method: "POST", path: "/v1/responses", body: `{"input":"hi"}`},
		{method: "GET", path: "/v1/models"},
		{method: "GET", path: "/v1/sessions"},
	} {
		for _, tok := range []string{"", "s3cret-gateway-tokeX", "wrong-but-long-token-value"} {
			c.token = tok
			resp, b := sessDo(t, srv, c)
			e := sessDecode[apiErr](t, b)
			if resp.StatusCode != http.StatusUnauthorized || e.Error.Type != "invalid_request_error" || e.Error.Code != "invalid_api_key" ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with token %q = %d %q %s", c.method, c.path, tok, resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			if tok != "" && strings.Contains(string(b), tok) {
				t.Errorf("%s %s: the answer echoes the token: %s", c.method, c.path, b)
			}
		}
	}
}
