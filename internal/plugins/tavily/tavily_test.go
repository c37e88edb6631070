package tavily

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/builtin/websearch"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/plugin"
)

// Fact 1: identity.
func TestIdentity(t *testing.T) {
	info := Factory.Info
	if d := cmp.Diff(plugin.Info{
		ID: "tavily", Description: info.Description,
		Tools: []string{"tavily_search", "tavily_extract"}, Providers: []string{"web_search:tavily"},
	}, info); d != "" {
		t.Errorf("Info (-want +got):\n%s", d)
	}
	p, err := plugin.Start(context.Background(), Factory, nil, plugin.Host{})
	if err != nil {
		t.Fatalf("Start with no config: %v", err)
	}
	defer p.Close()
	tp, ok := p.(plugin.ToolProvider)
	if !ok {
		t.Fatal("the plugin is not a plugin.ToolProvider")
	}
	type view struct{ ID, Name, Label, Owner, Source string }
	var got []view
	for _, e := range tp.Tools() {
		got = append(got, view{e.Tool.ID, e.Tool.Name, e.Tool.Label, e.Tool.Owner, string(e.Tool.Source)})
		if !catalog.ValidName(e.Tool.Name) {
			t.Errorf("%s: invalid model-facing name", e.Tool.ID)
		}
	}
	want := []view{
		{"nodmix:tavily:tavily_search", "tavily_search", "Tavily Search", "tavily", "plugin"},
		{"nodmix:tavily:tavily_extract", "tavily_extract", "Tavily Extract", "tavily", "plugin"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if _, ok := p.(interface{ WebSearchProvider() websearch.Provider }); !ok {
		t.Error("the plugin has no WebSearchProvider method")
	}
	if _, err := catalog.NewSnapshot(1, append(tp.Tools(), websearch.Tool(nil))); err != nil {
		t.Errorf("the tools do not fit in one catalog with web_search: %v", err)
	}
}

// The tool listing (ids, descriptions, exact schemas) is frozen in a golden file.
func TestToolsGolden(t *testing.T) {
	r := newRig(t, rigOpts{})
	type view struct {
		ID          string          `json:"id"`
		Name        string          `json:"name"`
		Label       string          `json:"label"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	var out []view
	for _, e := range r.p.Tools() {
		out = append(out, view{e.Tool.ID, e.Tool.Name, e.Tool.Label, e.Tool.Description, e.Tool.InputSchema})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tools.json", append(b, '\n'))
}

func TestDecodeConfig(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    cfgView
		wantErr string // from Decode, else from Validate
	}{
		{name: "absent", raw: ``},
		{name: "null", raw: `null`},
		{name: "empty", raw: `{}`},
		{name: "literal key and base", raw: `{"webSearch":{"apiKey":"tvly-x","baseUrl":"https://proxy.example/api/tavily/"}}`,
			want: cfgView{Key: "tvly-x", BaseURL: "https://proxy.example/api/tavily/"}},
		{name: "env ref", raw: `{"webSearch":{"apiKey":{"$env":"MY_TAVILY"}}}`, want: cfgView{KeyRef: "$env MY_TAVILY"}},
		{name: "file ref", raw: `{"webSearch":{"apiKey":{"$file":"/run/secrets/tavily"}}}`, want: cfgView{KeyRef: "$file /run/secrets/tavily"}},
		{name: "timeouts", raw: `{"webSearch":{"searchTimeoutSeconds":19.9,"extractTimeoutSeconds":90}}`,
			want: cfgView{Search: 19.9, Extract: 90}},
		{name: "unknown top-level field", raw: `{"websearch":{}}`, wantErr: "websearch: unknown field"},
		{name: "unknown nested field", raw: `{"webSearch":{"apiKye":"x"}}`, wantErr: "webSearch.apiKye: unknown field"},
		{name: "not an object", raw: `[]`, wantErr: "(root): must be an object"},
		{name: "webSearch not an object", raw: `{"webSearch":"x"}`, wantErr: "webSearch: must be an object"},
		{name: "key of the wrong type", raw: `{"webSearch":{"apiKey":5}}`, wantErr: `webSearch.apiKey: must be a string or a SecretRef: {"$env": "NAME"} or {"$file": "/path"}`},
		{name: "unknown ref kind", raw: `{"webSearch":{"apiKey":{"$vault":"x"}}}`, wantErr: `webSearch.apiKey: must be a string or a SecretRef: {"$env": "NAME"} or {"$file": "/path"}`},
		{name: "two ref kinds", raw: `{"webSearch":{"apiKey":{"$env":"A","$file":"/b"}}}`, wantErr: `webSearch.apiKey: must be a string or a SecretRef`},
		{name: "ref value not a string", raw: `{"webSearch":{"apiKey":{"$env":1}}}`, wantErr: `webSearch.apiKey: must be a string or a SecretRef`},
		{name: "base of the wrong type", raw: `{"webSearch":{"baseUrl":1}}`, wantErr: "webSearch.baseUrl: must be a string"},
		{name: "timeout of the wrong type", raw: `{"webSearch":{"searchTimeoutSeconds":"30"}}`, wantErr: "webSearch.searchTimeoutSeconds: must be a number of seconds"},
		{name: "bad env name", raw: `{"webSearch":{"apiKey":{"$env":"1BAD-NAME"}}}`, wantErr: "webSearch.apiKey: $env must name an environment variable (letters, digits and _, not starting with a digit)"},
		{name: "relative file", raw: `{"webSearch":{"apiKey":{"$file":"secrets/k"}}}`, wantErr: "webSearch.apiKey.$file: must be an absolute path (or start with ~/)"},
		{name: "home file", raw: `{"webSearch":{"apiKey":{"$file":"~/.tavily"}}}`, want: cfgView{KeyRef: "$file ~/.tavily"}},
		{name: "blank key", raw: `{"webSearch":{"apiKey":"   "}}`, wantErr: "webSearch.apiKey: must not be blank"},
		{name: "base without scheme", raw: `{"webSearch":{"baseUrl":"api.tavily.com"}}`, wantErr: "webSearch.baseUrl: must be an absolute http(s) URL like https://api.tavily.com"},
		{name: "base with another scheme", raw: `{"webSearch":{"baseUrl":"ftp://x"}}`, wantErr: "webSearch.baseUrl: must be an absolute http(s) URL"},
		{name: "timeout below a second", raw: `{"webSearch":{"searchTimeoutSeconds":0.5}}`, wantErr: "webSearch.searchTimeoutSeconds: must be from 1 to 600 seconds"},
		{name: "negative timeout", raw: `{"webSearch":{"extractTimeoutSeconds":-3}}`, wantErr: "webSearch.extractTimeoutSeconds: must be from 1 to 600 seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New()
			err := p.Decode(json.RawMessage(tt.raw))
			if err == nil {
				err = p.Validate()
			}
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to start with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if d := cmp.Diff(tt.want, viewOf(p.cfg)); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
		})
	}
}

// cfgView is what a test compares of a decoded config.
type cfgView struct {
	Key, KeyRef, BaseURL string
	Search, Extract      float64
}

func viewOf(c pluginConfig) cfgView {
	v := cfgView{BaseURL: c.baseURL, Search: c.searchTimeout, Extract: c.extractTimeout}
	if kind, target := c.apiKey.Ref(); kind != "" {
		v.KeyRef = kind + " " + target
	} else if c.apiKey.IsSet() {
		v.Key, _ = c.apiKey.Resolve(func(string) (string, bool) { return "", false })
	}
	return v
}

// plugin.Start names a bad field by its whole path in the config, the one `config set` takes.
func TestStartReportsTheConfigPath(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"webSearch":{"apiKye":"x"}}`, "plugins.entries.tavily.config.webSearch.apiKye: unknown field"},
		{`{"webSearch":{"searchTimeoutSeconds":-1}}`, "plugins.entries.tavily.config.webSearch.searchTimeoutSeconds: must be from 1 to 600 seconds"},
		{`[1]`, "plugins.entries.tavily.config: must be an object"},
	} {
		_, err := plugin.Start(context.Background(), Factory, json.RawMessage(tc.raw), plugin.Host{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.raw, err, tc.want)
		}
	}
}

// Fact 5: timeouts 30 s and 60 s, overridable, floored.
func TestTimeouts(t *testing.T) {
	tests := []struct {
		name        string
		config      string
		tool, args  string
		wantSeconds int
	}{
		{"search default", ``, "tavily_search", `{"query":"q"}`, 30},
		{"extract default", ``, "tavily_extract", `{"urls":["https://go.dev"]}`, 60},
		{"search floored", `"searchTimeoutSeconds":19.9`, "tavily_search", `{"query":"q"}`, 19},
		{"extract override", `"extractTimeoutSeconds":90`, "tavily_extract", `{"urls":["https://go.dev"]}`, 90},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got time.Duration
			rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				dl, ok := req.Context().Deadline()
				if !ok {
					t.Error("request without a deadline")
				}
				got = time.Until(dl)
				return nil, context.DeadlineExceeded
			})
			cfg := `{"webSearch":{"baseUrl":"$SERVER"}}`
			if tt.config != "" {
				cfg = `{"webSearch":{"baseUrl":"$SERVER",` + tt.config + `}}`
			}
			r := newRig(t, rigOpts{config: cfg, client: &http.Client{Transport: rt}})
			res := r.call(t, tt.tool, tt.args)
			want := time.Duration(tt.wantSeconds) * time.Second
			// The deadline was set just before the transport ran; allow for a slow machine.
			if got > want || got < want-5*time.Second {
				t.Errorf("attempt deadline %v ahead, want about %v", got, want)
			}
			label := map[string]string{"tavily_search": "Tavily Search", "tavily_extract": "Tavily Extract"}[tt.tool]
			if wantText := fmt.Sprintf("%s request timed out after %d s.", label, tt.wantSeconds); res.Text() != wantText || !res.IsError {
				t.Errorf("result = %q (error %v), want %q", res.Text(), res.IsError, wantText)
			}
		})
	}
	if got := timeout(0, DefaultSearchTimeout); got != DefaultSearchTimeout {
		t.Errorf("timeout(0) = %v", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Fact 2: API key resolution order; fact 15: the setup errors.
func TestAPIKeyResolution(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("tvly-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	emptyFile := filepath.Join(dir, "empty")
	if err := os.WriteFile(emptyFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		apiKey  string // JSON value of webSearch.apiKey, or ""
		env     map[string]string
		want    string // Bearer token sent
		wantErr string // setup error shown instead (search)
	}{
		{name: "config beats env", apiKey: `"tvly-config"`, env: map[string]string{EnvAPIKey: "tvly-env"}, want: "tvly-config"},
		{name: "config is trimmed", apiKey: `"  tvly-config  "`, env: map[string]string{}, want: "tvly-config"},
		{name: "env when no config", env: map[string]string{EnvAPIKey: " tvly-env "}, want: "tvly-env"},
		{name: "env ref", apiKey: `{"$env":"MY_TAVILY"}`, env: map[string]string{"MY_TAVILY": "tvly-ref", EnvAPIKey: "tvly-env"}, want: "tvly-ref"},
		{name: "file ref", apiKey: fmt.Sprintf(`{"$file":%q}`, keyFile), env: map[string]string{}, want: "tvly-from-file"},
		{name: "unset env ref falls back to TAVILY_API_KEY", apiKey: `{"$env":"MY_TAVILY"}`, env: map[string]string{EnvAPIKey: "tvly-env"}, want: "tvly-env"},
		{name: "blank env is unset", env: map[string]string{EnvAPIKey: "  "}, wantErr: msgMissingKeySearch},
		{name: "neither", env: map[string]string{}, wantErr: msgMissingKeySearch},
		{name: "unset env ref and no env", apiKey: `{"$env":"MY_TAVILY"}`, env: map[string]string{},
			wantErr: msgMissingKeySearch + " (webSearch.apiKey: environment variable MY_TAVILY is not set.)"},
		{name: "missing file", apiKey: fmt.Sprintf(`{"$file":%q}`, filepath.Join(dir, "nope")), env: map[string]string{},
			wantErr: msgMissingKeySearch + " (webSearch.apiKey: read secret file: open " + filepath.Join(dir, "nope") + ": no such file or directory.)"},
		{name: "empty file", apiKey: fmt.Sprintf(`{"$file":%q}`, emptyFile), env: map[string]string{},
			wantErr: msgMissingKeySearch + " (webSearch.apiKey: secret file " + emptyFile + " is empty.)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := `{"webSearch":{"baseUrl":"$SERVER"}}`
			if tt.apiKey != "" {
				cfg = `{"webSearch":{"baseUrl":"$SERVER","apiKey":` + tt.apiKey + `}}`
			}
			r := newRig(t, rigOpts{config: cfg, env: tt.env})
			res := r.call(t, "tavily_search", `{"query":"q"}`)
			if tt.wantErr != "" {
				if !res.IsError || res.Text() != tt.wantErr {
					t.Errorf("result = %q, want error %q", res.Text(), tt.wantErr)
				}
				if n := r.srv.count(); n != 0 {
					t.Errorf("%d requests sent without a key", n)
				}
				return
			}
			reqs := r.srv.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+tt.want {
				t.Errorf("Authorization = %q, want Bearer %s", got, tt.want)
			}
		})
	}
}

// The three tools name the setup error as documented: web_search and tavily_search share one.
func TestMissingKeyMessages(t *testing.T) {
	r := newRig(t, rigOpts{env: map[string]string{}})
	tests := []struct {
		name string
		run  func() (string, error)
		want string
	}{
		{"tavily_search", func() (string, error) { return r.call(t, "tavily_search", `{"query":"q"}`).Text(), nil }, msgMissingKeySearch},
		{"tavily_extract", func() (string, error) {
			return r.call(t, "tavily_extract", `{"urls":["https://go.dev"]}`).Text(), nil
		}, msgMissingKeyExtract},
		{"web_search", func() (string, error) {
			_, err := r.p.WebSearchProvider().Search(context.Background(), websearch.Query{Query: "q"})
			if !errors.Is(err, ErrMissingAPIKey) {
				t.Errorf("web_search error %v is not ErrMissingAPIKey", err)
			}
			return err.Error(), nil
		}, msgMissingKeySearch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := tt.run()
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := "tavily_extract needs a Tavily API key. Set TAVILY_API_KEY in the Gateway environment, or configure plugins.entries.tavily.config.webSearch.apiKey."; got != msgMissingKeyExtract {
		t.Errorf("documented extract message changed: %q", msgMissingKeyExtract)
	}
	if r.srv.count() != 0 {
		t.Errorf("requests were sent without a key")
	}
}

// Facts 3 and 4: base URL resolution and endpoint joining.
func TestEndpoint(t *testing.T) {
	tests := []struct{ base, path, want string }{
		{"https://api.tavily.com", "/search", "https://api.tavily.com/search"},
		{"https://api.tavily.com/", "/search", "https://api.tavily.com/search"},
		{"https://proxy.example/api/tavily/", "/extract", "https://proxy.example/api/tavily/extract"},
		{"https://proxy.example/api/tavily", "/search", "https://proxy.example/api/tavily/search"},
		{"  https://proxy.example/p/  ", "/search", "https://proxy.example/p/search"},
		{"http://127.0.0.1:8080/x?tenant=a", "/search", "http://127.0.0.1:8080/x/search?tenant=a"},
		{"", "/search", "https://api.tavily.com/search"},
		{"not a url", "/extract", "https://api.tavily.com/extract"},
		{"ftp://files.example", "/search", "https://api.tavily.com/search"},
		{"://broken", "/search", "https://api.tavily.com/search"},
	}
	for _, tt := range tests {
		if got := endpoint(tt.base, tt.path); got != tt.want {
			t.Errorf("endpoint(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
}

func TestBaseURLResolution(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		envBase  string // TAVILY_BASE_URL, with $SERVER replaced
		wantPath string
	}{
		{"config with a proxy prefix", `{"webSearch":{"baseUrl":"$SERVER/api/tavily/"}}`, "", "/api/tavily/search"},
		{"config beats TAVILY_BASE_URL", `{"webSearch":{"baseUrl":"$SERVER/a"}}`, "$SERVER/b", "/a/search"},
		{"TAVILY_BASE_URL when no config", `{}`, "$SERVER/b/", "/b/search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := map[string]string{EnvAPIKey: testKey}
			r := newRig(t, rigOpts{config: tt.config, env: e})
			if tt.envBase != "" {
				r.env.set(EnvBaseURL, strings.ReplaceAll(tt.envBase, "$SERVER", r.srv.srv.URL))
			}
			res := r.call(t, "tavily_search", `{"query":"q"}`)
			if res.IsError {
				t.Fatalf("error: %s", res.Text())
			}
			if reqs := r.srv.requests(); len(reqs) != 1 || reqs[0].Path != tt.wantPath {
				t.Errorf("requests %+v, want one to %s", reqs, tt.wantPath)
			}
		})
	}
	r := newRig(t, rigOpts{config: `{}`})
	if got := r.p.baseURL(); got != DefaultBaseURL {
		t.Errorf("default base = %q", got)
	}
}

func TestCacheTTLSetting(t *testing.T) {
	tests := []struct {
		name    string
		v       any
		want    time.Duration
		wantErr bool
	}{
		{"absent", nil, 15 * time.Minute, false},
		{"float", 5.0, 5 * time.Minute, false},
		{"int", 0, 0, false},
		{"fraction", 0.5, 30 * time.Second, false},
		{"json number", json.Number("2"), 2 * time.Minute, false},
		{"int64", int64(1), time.Minute, false},
		{"negative", -1, 0, true},
		{"string", "15", 0, true},
		{"bad json number", json.Number("x"), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			settings := map[string]any{}
			if tt.v != nil {
				settings[settingCacheTTL] = tt.v
			}
			got, err := cacheTTL(settings)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), "tools.web.search.cacheTtlMinutes: ") {
					t.Errorf("error %q does not name the setting", err)
				}
				return
			}
			if got != tt.want {
				t.Errorf("ttl = %v, want %v", got, tt.want)
			}
		})
	}
	_, err := plugin.Start(context.Background(), Factory, nil, plugin.Host{Settings: map[string]any{settingCacheTTL: -2}})
	if err == nil || !strings.Contains(err.Error(), "cacheTtlMinutes") {
		t.Errorf("Start with a negative TTL: %v", err)
	}
}

func TestMaxResultsSettingOutOfRange(t *testing.T) {
	_, err := plugin.Start(context.Background(), Factory, nil, plugin.Host{Settings: map[string]any{settingMaxResults: 21}})
	if err == nil || !strings.Contains(err.Error(), "tools.web.search.maxResults: must be an integer from 1 to 20") {
		t.Errorf("Start = %v", err)
	}
}
