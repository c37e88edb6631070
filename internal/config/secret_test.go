package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/config/json5"
)

// literals are the secret values in testdata/realistic.json5; none may ever be shown.
var literals = []string{"lin_api_0123456789abcdef", "tvly-dev-0123456789abcdef"}

func assertNoLiteral(t *testing.T, what, text string) {
	t.Helper()
	for _, l := range literals {
		if strings.Contains(text, l) {
			t.Errorf("%s reveals a secret:\n%s", what, text)
		}
	}
}

func loadRealistic(t *testing.T) *File {
	t.Helper()
	f, err := Load(writeRealistic(t))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return f
}

func TestGetMasksSecrets(t *testing.T) {
	f := loadRealistic(t)
	tests := []struct {
		path string
		want string
	}{
		{"plugins.entries.tavily.config.webSearch.apiKey", `"********"`},
		{"plugins.entries.tavily.config.webSearch", "{\n  \"apiKey\": \"********\",\n  \"baseUrl\": \"https://api.tavily.com\"\n}"},
		{"mcp.servers.linear.headers", "{\n  \"Authorization\": \"********\",\n  \"X-Client\": \"********\"\n}"},
		{"mcp.servers.github.headers.Authorization", "{\n  \"$env\": \"GITHUB_MCP_TOKEN\"\n}"},
		{"mcp.servers.fs.env", "{\n  \"NODE_OPTIONS\": \"********\"\n}"},
		{"mcp.servers.postgres.env.DATABASE_URL", "{\n  \"$file\": \"/run/secrets/database_url\"\n}"},
		{"gateway.auth", "{\n  \"token\": {\n    \"$env\": \"NODMIX_GATEWAY_TOKEN\"\n  }\n}"},
		{"tools.web.search.provider", `"tavily"`},
		{"tools.toolSearch.maxSearchLimit", `20`},
		{"agents.list[1].tools.allow", "[\n  \"tavily_*\"\n]"},
		{"tools.allow.0", `"nodmix:*"`},
	}
	for _, tt := range tests {
		got, err := f.Get(tt.path)
		if err != nil {
			t.Errorf("Get(%s): %v", tt.path, err)
			continue
		}
		if diff := cmp.Diff(tt.want, string(got)); diff != "" {
			t.Errorf("Get(%s) (-want +got):\n%s", tt.path, diff)
		}
	}
	for _, p := range []string{"", "plugins", "mcp", "mcp.servers.linear", "plugins.entries.tavily.config"} {
		got, err := f.Get(p)
		if err != nil {
			t.Fatalf("Get(%q): %v", p, err)
		}
		assertNoLiteral(t, fmt.Sprintf("Get(%q)", p), string(got))
		if !json.Valid(got) {
			t.Errorf("Get(%q) is not JSON:\n%s", p, got)
		}
	}
	// Inside a secret-named key every value is secret; inside a SecretRef nothing is.
	if err := f.Set("plugins.entries.tavily.config.webSearch.apiKey", []byte(`{primary: "tvly-dev-0123456789abcdef"}`)); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"plugins.entries.tavily.config.webSearch.apiKey.primary": `"********"`,
		"plugins.entries.tavily.config.webSearch.apiKey":         "{\n  \"primary\": \"********\"\n}",
		"gateway.auth.token.$env":                                `"NODMIX_GATEWAY_TOKEN"`,
	} {
		if got, err := f.Get(path); err != nil || string(got) != want {
			t.Errorf("Get(%s) = %s, %v; want %s", path, got, err, want)
		}
	}
	if _, err := f.Get("tools.nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(tools.nope) error = %v, want ErrNotFound", err)
	}
}

func TestSecretNames(t *testing.T) {
	for key, want := range map[string]bool{
		"apiKey": true, "api_key": true, "API-KEY": true, "apiKeys": true, "token": true, "accessToken": true,
		"password": true, "dbPassword": true, "secret": true, "clientSecret": true, "passwd": true,
		"Authorization": true, "proxy-authorization": true, "cookie": true, "sessionCookies": true, "Set-Cookie": true,
		"baseUrl": false, "maxTokens": false, "tokenizer": false, "secretName": false, "keyId": false,
	} {
		if got := isSecretName(key); got != want {
			t.Errorf("isSecretName(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestConfigPrintingMasksSecrets(t *testing.T) {
	f := loadRealistic(t)
	cfg := f.Config()
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%q"} {
		assertNoLiteral(t, "fmt "+format, fmt.Sprintf(format, cfg))
		assertNoLiteral(t, "fmt "+format+" of value", fmt.Sprintf(format, *cfg))
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	assertNoLiteral(t, "json.Marshal", string(out))
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("config", "cfg", cfg, "token", cfg.MCP.Servers["linear"].Headers["Authorization"])
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "cfg", cfg, "entry", cfg.Plugins.Entries["tavily"])
	assertNoLiteral(t, "slog", buf.String())
	// The masked forms still say what is configured.
	if got := fmt.Sprint(cfg.Gateway.Auth.Token); got != "$env:NODMIX_GATEWAY_TOKEN" {
		t.Errorf("Sprint(ref) = %q", got)
	}
	if got := fmt.Sprint(cfg.MCP.Servers["linear"].Headers["Authorization"]); got != Mask {
		t.Errorf("Sprint(literal) = %q", got)
	}
	if got := fmt.Sprint(cfg.Plugins.Entries["tavily"]); got != `{Enabled:true Config:{"webSearch":{"apiKey":"********","baseUrl":"https://api.tavily.com"}}}` {
		t.Errorf("Sprint(plugin entry) = %s", got)
	}
}

func TestSecretResolve(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte("  file-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty"), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SET": "env-value", "HOME": dir}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	secret := func(t *testing.T, text string) Secret {
		t.Helper()
		var s Secret
		if d := (&decoder{dir: dir}); !d.secret("gateway.auth.token", mustParse(t, text), &s) {
			t.Fatalf("secret %s: %v", text, d.errs)
		}
		return s
	}
	tests := []struct {
		in, want, wantErr string
	}{
		{in: `"literal-value"`, want: "literal-value"},
		{in: `{"$env": "SET"}`, want: "env-value"},
		{in: `{"$env": "UNSET"}`, wantErr: "gateway.auth.token: environment variable UNSET is not set"},
		{in: `{"$file": "key"}`, want: "file-value"},
		{in: `{"$file": "~/key"}`, want: "file-value"},
		{in: fmt.Sprintf(`{"$file": %q}`, filepath.Join(dir, "key")), want: "file-value"},
		{in: `{"$file": "empty"}`, wantErr: "gateway.auth.token: secret file " + filepath.Join(dir, "empty") + " is empty"},
		{in: `{"$file": "missing"}`, wantErr: "gateway.auth.token: read secret file: open " + filepath.Join(dir, "missing") + ": no such file or directory"},
	}
	for _, tt := range tests {
		got, err := secret(t, tt.in).Resolve(lookup)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Resolve(%s) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	var unset Secret
	if _, err := unset.Resolve(lookup); !errors.Is(err, ErrSecretNotSet) || unset.IsSet() {
		t.Errorf("zero Secret: Resolve error %v, IsSet %v", err, unset.IsSet())
	}
	if v, err := secret(t, `""`).Resolve(lookup); err != nil || v != "" {
		t.Errorf(`empty literal resolves to %q, %v; want "", nil`, v, err)
	}
}

func TestSecretUnmarshalJSON(t *testing.T) {
	var cfg struct {
		APIKey Secret `json:"apiKey"`
		Token  Secret `json:"token"`
		None   Secret `json:"none"`
	}
	if err := json.Unmarshal([]byte(`{"apiKey": "tvly-x", "token": {"$env": "T"}, "none": null}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if !cfg.APIKey.IsSet() || cfg.APIKey.String() != Mask || cfg.Token.String() != "$env:T" || cfg.None.IsSet() {
		t.Errorf("decoded %v %v %v", cfg.APIKey, cfg.Token, cfg.None)
	}
	if kind, target := cfg.Token.Ref(); kind != "$env" || target != "T" {
		t.Errorf("Ref() = %q, %q", kind, target)
	}
	err := json.Unmarshal([]byte(`{"apiKey": {"$vault": "x"}}`), &cfg)
	if err == nil || !strings.Contains(err.Error(), "must be a string or a SecretRef") {
		t.Errorf("bad SecretRef error = %v", err)
	}
	out, _ := json.Marshal(cfg)
	if want := `{"apiKey":"********","token":{"$env":"T"},"none":null}`; string(out) != want {
		t.Errorf("Marshal = %s, want %s", out, want)
	}
}

func TestValidationErrorsDoNotShowValues(t *testing.T) {
	const value = "sk-live-do-not-print"
	docs := []string{
		`{gateway: {auth: {token: {"$env": "` + value + `"}}}}`,
		`{mcp: {servers: {x: {url: "ftp://user:` + value + `@h"}}}}`,
		`{gateway: {listen: "` + value + `"}}`,
		`{tools: {discoveryMode: "` + value + `"}}`,
		`{plugins: {entries: {x: {config: {apiKey: "` + value + `", n: NaN}}}}}`,
		`{gateway: {auth: {token: "` + value + `"}}, tools: 1}`,
	}
	for _, doc := range docs {
		_, err := Parse([]byte(doc))
		if err == nil {
			t.Errorf("%s: no error", doc)
			continue
		}
		if strings.Contains(err.Error(), value) {
			t.Errorf("error shows the value: %v", err)
		}
	}
}

func mustParse(t *testing.T, text string) *json5.Node {
	t.Helper()
	n, err := json5.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Every value the decoder takes as a Secret is masked by Get too, whatever its key is called:
// a provider's headers and the exec environment, like a server's headers and env. A header
// named Authorization is a credential wherever it appears, a plugin's or a model's params too.
func TestGetMasksEverySecretField(t *testing.T) {
	const value = "sk-live-do-not-print"
	path := writeFile(t, `{
  models: {providers: {x: {baseUrl: "https://h", headers: {Authorization: "Bearer `+value+`", "X-Org": "`+value+`"}}}},
  tools: {exec: {env: {DEPLOY_KEY: "`+value+`", GH: {"$env": "GH_PAT"}}}},
  plugins: {entries: {x: {config: {headers: {authorization: "Bearer `+value+`"}}}}},
  agents: {defaults: {models: {"x/y": {params: {headers: {Authorization: "Bearer `+value+`"}}}}}},
}`, 0o600)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", "models", "models.providers.x.headers", "models.providers.x.headers.Authorization",
		"models.providers.x.headers.X-Org", "tools.exec", "tools.exec.env.DEPLOY_KEY", "plugins.entries.x", "agents"} {
		got, err := f.Get(p)
		if err != nil {
			t.Fatalf("Get(%q): %v", p, err)
		}
		if strings.Contains(string(got), value) {
			t.Errorf("Get(%q) reveals a secret:\n%s", p, got)
		}
	}
	if got, err := f.Get("tools.exec.env.GH"); err != nil || string(got) != "{\n  \"$env\": \"GH_PAT\"\n}" {
		t.Errorf("Get(tools.exec.env.GH) = %s, %v; want the SecretRef as written", got, err)
	}
	for _, format := range []string{"%v", "%+v"} {
		if s := fmt.Sprintf(format, f.Config()); strings.Contains(s, value) {
			t.Errorf("fmt %s reveals a secret:\n%s", format, s)
		}
	}
}

// A secret whose name ends in URL (a webhook, a database URL) is masked whole: showing it as an
// endpoint, without only its user info and query, would print a credential held in its path.
func TestGetMasksSecretURLs(t *testing.T) {
	const value = "T0-B0-do-not-print"
	path := writeFile(t, `{
  mcp: {servers: {s: {command: "x", env: {SLACK_WEBHOOK_URL: "https://hooks.example.com/services/`+value+`"}},
                  h: {url: "https://mcp.example.com/x?key=`+value+`"}}},
  tools: {exec: {env: {DATABASE_URL: "postgres://db.example.com/`+value+`"}}},
  plugins: {entries: {x: {config: {apiKey: {baseUrl: "https://api.example.com/`+value+`"}}}}},
}`, 0o600)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"mcp.servers.s.env.SLACK_WEBHOOK_URL": `"********"`,
		"tools.exec.env.DATABASE_URL":         `"********"`,
		"plugins.entries.x.config.apiKey":     "{\n  \"baseUrl\": \"********\"\n}",
		"mcp.servers.h.url":                   `"https://mcp.example.com/x?…"`,
	} {
		if got, err := f.Get(p); err != nil || string(got) != want {
			t.Errorf("Get(%s) = %s, %v; want %s", p, got, err, want)
		}
	}
	if got, _ := f.Get(""); strings.Contains(string(got), value) {
		t.Errorf("Get(\"\") reveals a secret:\n%s", got)
	}
}

// TestGetOfAWideMapIsLinear: config get of a map of many entries renders at a cost proportional
// to the file. Each value looked up its containers again from the root, scanning every member
// of the map before it: a 2 MB tools.exec.env took a minute of CPU, one at the 16 MiB bound
// hours. The deadline only guards against that hang.
func TestGetOfAWideMapIsLinear(t *testing.T) {
	const n = 300_000
	var b strings.Builder
	b.WriteString("{tools: {exec: {env: {")
	for i := range n {
		fmt.Fprintf(&b, "K%d: %q, ", i, fmt.Sprintf("v%d", i))
	}
	b.WriteString(`KEY_REF: {$env: "X"}}}}, mcp: {servers: {s: {command: "x", args: [`)
	for range n / 2 {
		b.WriteString(`"--token", "t", `)
	}
	b.WriteString("]}}}}")
	f, err := Load(writeFile(t, b.String(), 0o600))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		env, args []byte
		err       error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		if r.env, r.err = f.Get("tools.exec.env"); r.err == nil {
			r.args, r.err = f.Get("")
		}
		done <- r
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("config get of a map of %d entries has not finished after 2 minutes", n)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := bytes.Count(r.env, []byte(`"`+Mask+`"`)); got != n {
		t.Errorf("%d of the %d values masked", got, n)
	}
	if !bytes.Contains(r.env, []byte(`"KEY_REF": {`)) || bytes.Contains(r.env, []byte(`"v1"`)) {
		t.Errorf("env rendered wrongly: %.200s…", r.env)
	}
	if bytes.Contains(r.args, []byte(`"t"`)) {
		t.Errorf("an argument after --token is shown")
	}
}

// TestGetOfDeepNesting: config get of values nested as deep as the parser allows stays near the
// file's size, in its text and in what it allocates. Indented, each line carried its depth in
// spaces (a 120 kB file gave 700 MB, a 16 MiB one would not fit in memory), so past a bound the
// value is given compact; and masking walked every value's whole path, quadratic in the depth.
func TestGetOfDeepNesting(t *testing.T) {
	const depth, values = json5.MaxDepth - 10, 2000
	text := `{plugins: {entries: {x: {config: {apiKey: "k", v: ` + strings.Repeat("[", depth) +
		strings.Repeat(`"x", `, values) + strings.Repeat("]", depth) + `}}}}}`
	f, _ := Load(writeFile(t, text, 0o600))
	if f == nil {
		t.Fatal("Load refused the file")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := f.Get("")
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > 4*len(text) {
		t.Errorf("Get of a %d-byte file gave %d bytes", len(text), len(out))
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(500*len(text)); got > limit {
		t.Errorf("Get of a %d-byte file allocated %d bytes, over %d", len(text), got, limit)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Errorf("Get gave invalid JSON: %v", err)
	}
	if !bytes.Contains(out, []byte(`"apiKey":"`+Mask+`"`)) || bytes.Count(out, []byte(`"x"`)) != values+1 { // and the plugin id
		t.Errorf("Get rendered wrongly: %.200s", out)
	}
}
