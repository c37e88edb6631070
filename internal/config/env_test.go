package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSecretEnv(t *testing.T) {
	cfg, err := Parse([]byte(`{
  tools: { exec: { env: { GH_TOKEN: { $env: "GITHUB_TOKEN" }, PLAIN: "x" } } },
  mcp: { servers: {
    gh: { command: "gh-mcp", env: { TOKEN: { $env: "GH_MCP_TOKEN" }, LITERAL: "not-a-ref" } },
    web: { url: "https://example.com/mcp", headers: { Authorization: { $env: "WEB_AUTH" } } },
  } },
  plugins: { entries: { tavily: { config: { webSearch: { apiKey: { $env: "MY_TAVILY" } } } } } },
  models: { providers: { corp: { baseUrl: "https://llm.example.com/v1", apiKey: { $env: "CORP_LLM_KEY" } } } },
  gateway: { auth: { token: { $env: "GATEWAY_TOKEN" } } },
  agents: { defaults: { model: "corp/m1" } },
}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CORP_LLM_KEY", "GATEWAY_TOKEN", "GH_MCP_TOKEN", "GITHUB_TOKEN", "MY_TAVILY", "WEB_AUTH"}
	if diff := cmp.Diff(want, cfg.SecretEnv()); diff != "" {
		t.Errorf("SecretEnv (-want +got):\n%s", diff)
	}
	if got := Default().SecretEnv(); len(got) != 0 {
		t.Errorf("empty config: SecretEnv = %v, want none", got)
	}
}

func TestSecretEnvRaw(t *testing.T) {
	// Free-form JSON: a SecretRef is found at any depth, in arrays too; a "$env" key among
	// others is not a SecretRef.
	cfg := &Config{Agents: Agents{List: []json.RawMessage{
		json.RawMessage(`{"a":[{"b":{"$env":"DEEP"}}],"c":{"$env":"X","other":1},"d":{"$file":"/k"}}`),
	}}}
	if got := cfg.SecretEnv(); !cmp.Equal(got, []string{"DEEP"}) {
		t.Errorf("got %v, want [DEEP]", got)
	}
}

func TestExecEnviron(t *testing.T) {
	cfg, err := Parse([]byte(`{ tools: { exec: { env: { B: "literal", A: { $env: "SRC" } } } } }`))
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) {
		if k == "SRC" {
			return "from-env", true
		}
		return "", false
	}
	got, err := cfg.Tools.Exec.Environ(lookup)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"A=from-env", "B=literal"}, got); diff != "" {
		t.Errorf("Environ (-want +got):\n%s", diff)
	}
	_, err = cfg.Tools.Exec.Environ(func(string) (string, bool) { return "", false })
	if err == nil || err.Error() != "tools.exec.env.A: environment variable SRC is not set" {
		t.Errorf("unset source: err = %v", err)
	}
	if got, err := Default().Tools.Exec.Environ(lookup); got != nil || err != nil {
		t.Errorf("no env: %v, %v", got, err)
	}
}

func TestExecEnvRules(t *testing.T) {
	_, err := Parse([]byte(`{ tools: { exec: { env: { "1BAD": "x", OK: 7, NUL: null } } } }`))
	want := []string{
		"tools.exec.env.1BAD: must be an environment variable name (letters, digits and _, not starting with a digit)",
		"tools.exec.env.NUL: " + secretRule,
		"tools.exec.env.OK: " + secretRule,
	}
	if diff := cmp.Diff(want, messages(err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/mcp", "https://example.com/mcp"},
		{"http://user:pw-secret@host:8080/mcp?token=abc123&mode=x#frag", "http://host:8080/mcp?…"},
		{"https://user@example.com/mcp", "https://example.com/mcp"},
		{"https://example.com/mcp?", "https://example.com/mcp?…"},
		{"HTTPS://Example.com/a%2Fb", "HTTPS://Example.com/a%2Fb"},
		{"https://example.com/p#access_token=abc", "https://example.com/p"},
		{"http://[::1", "(invalid url)"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestGetRedactsServerURL: config get never prints a server URL's credentials, whichever part
// of the document is asked for.
func TestGetRedactsServerURL(t *testing.T) {
	path := writeFile(t, `{ mcp: { servers: { remote: { url: "http://alice:pw-secret@example.com/mcp?token=tok-secret&x=1" },
  plain: { url: "https://example.com/open" } } },
  models: { providers: { corp: { baseUrl: "https://bob:pw-secret@llm.example.com/v1?key=tok-secret" } } },
  plugins: { entries: { tavily: { config: { webSearch: { baseUrl: "https://proxy.example.com/t?x=1&auth=tok-secret" } } } } } }`, 0o600)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", "mcp", "mcp.servers", "mcp.servers.remote", "mcp.servers.remote.url"} {
		got, err := f.Get(p)
		if err != nil {
			t.Fatalf("Get(%q): %v", p, err)
		}
		for _, secret := range []string{"alice", "pw-secret", "tok-secret", "x=1"} {
			if strings.Contains(string(got), secret) {
				t.Errorf("Get(%q) shows %q:\n%s", p, secret, got)
			}
		}
		if !strings.Contains(string(got), `"http://example.com/mcp?…"`) {
			t.Errorf("Get(%q) lacks the redacted URL:\n%s", p, got)
		}
	}
	for p, want := range map[string]string{
		"models.providers.corp.baseUrl":                   `"https://llm.example.com/v1?…"`,
		"plugins.entries.tavily.config.webSearch.baseUrl": `"https://proxy.example.com/t?…"`,
		"plugins.entries.tavily":                          `"baseUrl": "https://proxy.example.com/t?…"`,
	} {
		got, err := f.Get(p)
		if err != nil {
			t.Fatalf("Get(%q): %v", p, err)
		}
		if !strings.Contains(string(got), want) || strings.Contains(string(got), "secret") {
			t.Errorf("Get(%q) = %s, want it to show %s and no secret", p, got, want)
		}
	}
	if got, _ := f.Get("mcp.servers.plain.url"); string(got) != `"https://example.com/open"` {
		t.Errorf("a URL without credentials changed: %s", got)
	}
}

// TestSaveRemovesStaleTemps: temporary files a killed writer left behind are removed by the next
// write once they are a minute old; a younger one may belong to a writer still at work.
func TestSaveRemovesStaleTemps(t *testing.T) {
	path := writeFile(t, "{}\n", 0o600)
	dir := filepath.Dir(path)
	old := time.Now().Add(-2 * staleTemp)
	stale := []string{".nodmix.json5.tmp-111", ".nodmix.json5.tmp-222"}
	fresh := ".nodmix.json5.tmp-333"
	other := ".other.json5.tmp-444" // not ours
	for _, name := range append(slices.Clone(stale), fresh, other) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{half"), 0o600); err != nil {
			t.Fatal(err)
		}
		if name != fresh {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set("tools.discoveryMode", []byte(`"all"`)); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{fresh, other, "nodmix.json5"}, names); diff != "" {
		t.Errorf("directory after Save (-want +got):\n%s", diff)
	}
}

// TestGetMasksServerArgs: config get shows a server's arguments with the secrets they carry
// masked, by the names that carry them, and every other argument as it is.
func TestGetMasksServerArgs(t *testing.T) {
	path := writeFile(t, `{ mcp: { servers: {
  gh: { command: "docker", args: ["run", "-i", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN=ghp-hidden1", "--rm", "ghcr.io/github/github-mcp-server"] },
  remote: { command: "npx", args: ["mcp-remote", "https://mcp.example.com/sse?token=hidden2", "--header", "Authorization: Bearer hidden3", "--header", "X-Api-Key:hidden4"] },
  tool: { command: "srv", args: ["--api-key", "hidden5", "--client-secret=hidden6", "--port", "8080", "--name=plain", "a=b", "https://example.com/open"] } } } }`, 0o600)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"gh":     {"run", "-i", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN=" + Mask, "--rm", "ghcr.io/github/github-mcp-server"},
		"remote": {"mcp-remote", "https://mcp.example.com/sse?…", "--header", "Authorization: " + Mask, "--header", "X-Api-Key:" + Mask},
		"tool":   {"--api-key", Mask, "--client-secret=" + Mask, "--port", "8080", "--name=plain", "a=b", "https://example.com/open"},
	}
	for server, args := range want {
		for _, p := range []string{"", "mcp.servers." + server, "mcp.servers." + server + ".args"} {
			got, err := f.Get(p)
			if err != nil {
				t.Fatalf("Get(%q): %v", p, err)
			}
			if strings.Contains(string(got), "hidden") {
				t.Errorf("Get(%q) shows a secret:\n%s", p, got)
			}
			for _, a := range args {
				if q, _ := json.Marshal(a); !strings.Contains(string(got), string(q)) {
					t.Errorf("Get(%q) lacks the argument %s:\n%s", p, q, got)
				}
			}
		}
	}
	for i, a := range want["tool"] {
		p := fmt.Sprintf("mcp.servers.tool.args.%d", i)
		got, err := f.Get(p)
		if err != nil {
			t.Fatalf("Get(%q): %v", p, err)
		}
		if q, _ := json.Marshal(a); string(got) != string(q) {
			t.Errorf("Get(%q) = %s, want %s", p, got, q)
		}
	}
}

// ArgSecrets finds in a server's arguments exactly what config get masks there, so that the hub
// can mask it in what the server prints.
func TestArgSecrets(t *testing.T) {
	args := []string{"run", "-e", "GITHUB_TOKEN=hidden1", "--api-key", "hidden2", "--client-secret=hidden3",
		"--header", "Authorization: Bearer hidden4", "https://u:hidden5@mcp.example.com/sse?token=hidden6", "--port", "8080", "a=b"}
	got := ArgSecrets(args)
	want := []string{"hidden1", "hidden2", "hidden3", "Bearer hidden4", "token=hidden6", "hidden6", "hidden5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ArgSecrets (-want +got):\n%s", diff)
	}
}

// A hook's command line is masked as a server's args are: it may carry a key the same ways.
func TestGetMasksHookCommands(t *testing.T) {
	path := writeFile(t, `{ tools: { hooks: { beforeCall: [
  { command: ["check", "--api-key", "hidden1", "--token=hidden2", "https://h/x?key=hidden3", "--mode", "strict"] } ] } } }`, 0o600)
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"check", "--api-key", Mask, "--token=" + Mask, "https://h/x?…", "--mode", "strict"}
	for _, p := range []string{"", "tools", "tools.hooks.beforeCall", "tools.hooks.beforeCall[0].command"} {
		got, err := f.Get(p)
		if err != nil {
			t.Fatalf("Get(%q): %v", p, err)
		}
		if strings.Contains(string(got), "hidden") {
			t.Errorf("Get(%q) shows a secret:\n%s", p, got)
		}
		for _, a := range want {
			if q, _ := json.Marshal(a); !strings.Contains(string(got), string(q)) {
				t.Errorf("Get(%q) lacks the argument %s:\n%s", p, q, got)
			}
		}
	}
	got, err := f.Get("tools.hooks.beforeCall[0].command[2]")
	if err != nil || string(got) != `"`+Mask+`"` {
		t.Errorf("one argument: %s %v", got, err)
	}
}
