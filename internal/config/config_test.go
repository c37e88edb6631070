package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// secretCmp compares Secrets by what they hold.
var secretCmp = cmp.Comparer(func(a, b Secret) bool { return a == b })

func messages(err error) []string {
	var out []string
	for _, e := range Errors(err) {
		out = append(out, e.Error())
	}
	return out
}

func TestValidationRules(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"root must be an object", `[]`, []string{"(root): must be an object"}},
		{"unknown top-level key", `{tool: {}}`, []string{"tool: unknown key (did you mean tools?)"}},
		{"unknown key lists the known ones", `{zzz: 1}`, []string{"zzz: unknown key (known keys: tools, mcp, plugins, models, agents, gateway)"}},
		{"duplicate key", `{tools: {}, tools: {}}`, []string{"tools: duplicate key"}},
		{"section must be an object", `{tools: true}`, []string{"tools: must be an object"}},
		{"unknown key under a known section", `{tools: {toolsearch: true}}`, []string{"tools.toolsearch: unknown key (did you mean toolSearch?)"}},
		{"discoveryMode enum", `{tools: {discoveryMode: "some"}}`, []string{"tools.discoveryMode: must be one of off, auto, all, mcp-only"}},
		{"discoveryMode type", `{tools: {discoveryMode: true}}`, []string{"tools.discoveryMode: must be one of off, auto, all, mcp-only"}},
		{"essentialOverride", `{tools: {essentialOverride: "exec"}}`, []string{"tools.essentialOverride: must be an array of strings"}},
		{"toolSearch type", `{tools: {toolSearch: "yes"}}`, []string{"tools.toolSearch: must be a boolean or an object"}},
		{"toolSearch mode", `{tools: {toolSearch: {mode: "directory"}}}`, []string{"tools.toolSearch.mode: must be one of code, tools"}},
		{"toolSearch unknown key", `{tools: {toolSearch: {limit: 3}}}`, []string{"tools.toolSearch.limit: unknown key (known keys: enabled, mode, codeTimeoutMs, searchDefaultLimit, maxSearchLimit)"}},
		{"toolSearch number", `{tools: {toolSearch: {maxSearchLimit: "9"}}}`, []string{"tools.toolSearch.maxSearchLimit: must be a number"}},
		{"toolSearch finite", `{tools: {toolSearch: {codeTimeoutMs: Infinity}}}`, []string{"tools.toolSearch.codeTimeoutMs: must be a finite number"}},
		{"toolSearch enabled", `{tools: {toolSearch: {enabled: 1}}}`, []string{"tools.toolSearch.enabled: must be a boolean"}},
		{"allow must be strings", `{tools: {allow: ["a", 1]}}`, []string{"tools.allow: must be an array of strings"}},
		{"allow not an array", `{tools: {allow: "a"}}`, []string{"tools.allow: must be an array of strings"}},
		{"deny bad glob", `{tools: {deny: ["ok", "[abc"]}}`, []string{"tools.deny[1]: must be a valid glob pattern (* ? and [...] classes)"}},
		{"empty glob", `{tools: {allow: [""]}}`, []string{"tools.allow[0]: must not be empty"}},
		{"glob with a lone backslash", `{tools: {approval: {require: ["mcp:*\\"]}}}`, []string{"tools.approval.require[0]: must be a valid glob pattern (* ? and [...] classes)"}},
		{"approval.require", `{tools: {approval: {require: [1]}}}`, []string{"tools.approval.require: must be an array of strings"}},
		{"approval unknown", `{tools: {approval: {always: []}}}`, []string{"tools.approval.always: unknown key (known keys: require)"}},
		{"hooks list", `{tools: {hooks: {beforeCall: {}}}}`, []string{"tools.hooks.beforeCall: must be an array of hooks"}},
		{"hook must be an object", `{tools: {hooks: {beforeCall: ["x"]}}}`, []string{"tools.hooks.beforeCall[0]: must be an object"}},
		{"hook command required", `{tools: {hooks: {beforeCall: [{tools: ["*"]}]}}}`, []string{"tools.hooks.beforeCall[0].command: is required"}},
		{"hook command empty", `{tools: {hooks: {beforeCall: [{command: []}]}}}`, []string{"tools.hooks.beforeCall[0].command: must be a non-empty array of strings (the program and its arguments)"}},
		{"hook command type", `{tools: {hooks: {beforeCall: [{command: "ls -l"}]}}}`, []string{"tools.hooks.beforeCall[0].command: must be an array of strings"}},
		{"hook program empty", `{tools: {hooks: {beforeCall: [{command: [""]}]}}}`, []string{"tools.hooks.beforeCall[0].command[0]: must not be empty"}},
		{"hook tools empty", `{tools: {hooks: {beforeCall: [{command: ["x"], tools: []}]}}}`, []string{"tools.hooks.beforeCall[0].tools: must not be empty (leave it out to match every tool)"}},
		{"hook timeout", `{tools: {hooks: {beforeCall: [{command: ["x"], timeoutMs: 0}]}}}`, []string{"tools.hooks.beforeCall[0].timeoutMs: must be an integer from 1 to 600000"}},
		// The policy runs a hook for 10 minutes at most: config refuses more, not the start-up.
		{"hook timeout too long", `{tools: {hooks: {beforeCall: [{command: ["x"], timeoutMs: 600001}]}}}`, []string{"tools.hooks.beforeCall[0].timeoutMs: must be an integer from 1 to 600000"}},
		{"web provider", `{tools: {web: {search: {provider: ""}}}}`, []string{"tools.web.search.provider: must be a non-empty string"}},
		{"web cache ttl negative", `{tools: {web: {search: {cacheTtlMinutes: -1}}}}`, []string{"tools.web.search.cacheTtlMinutes: must be an integer from 0 to 43200"}},
		{"integers reject 1.5", `{tools: {web: {search: {cacheTtlMinutes: 1.5}}}}`, []string{"tools.web.search.cacheTtlMinutes: must be an integer from 0 to 43200"}},
		{"web maxResults range", `{tools: {web: {search: {maxResults: 21}}}}`, []string{"tools.web.search.maxResults: must be an integer from 1 to 20"}},
		{"web unknown", `{tools: {web: {fetch: {}}}}`, []string{"tools.web.fetch: unknown key (known keys: search)"}},
		{"exec timeout range", `{tools: {exec: {timeoutSeconds: 0}}}`, []string{"tools.exec.timeoutSeconds: must be an integer from 1 to 86400"}},
		{"exec timeout over max", `{tools: {exec: {timeoutSeconds: 600, maxTimeoutSeconds: 300}}}`, []string{"tools.exec.timeoutSeconds: must not exceed tools.exec.maxTimeoutSeconds (300)"}},
		{"exec max under default timeout", `{tools: {exec: {maxTimeoutSeconds: 60}}}`, []string{"tools.exec.maxTimeoutSeconds: must be at least tools.exec.timeoutSeconds (120 by default)"}},
		{"exec output", `{tools: {exec: {maxOutputBytes: "1MiB"}}}`, []string{"tools.exec.maxOutputBytes: must be an integer from 1 to 1073741824"}},
		{"mcp discoveryMode", `{mcp: {discoveryMode: "yes"}}`, []string{"mcp.discoveryMode: must be a boolean"}},
		{"mcp servers object", `{mcp: {servers: []}}`, []string{"mcp.servers: must be an object"}},
		{"server needs command or url", `{mcp: {servers: {x: {}}}}`, []string{"mcp.servers.x: needs either command or url"}},
		{"server not both", `{mcp: {servers: {x: {command: "a", url: "http://h"}}}}`, []string{"mcp.servers.x: needs either command or url, not both"}},
		{"server name", `{mcp: {servers: {"a b": {command: "a"}}}}`, []string{"mcp.servers.a b: server name must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"}},
		{"server name first", `{mcp: {servers: {"-x": {command: "a"}, "_y": {command: "a"}}}}`, []string{
			"mcp.servers.-x: server name must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$",
			"mcp.servers._y: server name must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"}},
		{"server url scheme", `{mcp: {servers: {x: {url: "ftp://h/x"}}}}`, []string{"mcp.servers.x.url: must be an http or https URL"}},
		{"server url host", `{mcp: {servers: {x: {url: "https:///x"}}}}`, []string{"mcp.servers.x.url: must be an http or https URL"}},
		{"server command empty", `{mcp: {servers: {x: {command: ""}}}}`, []string{"mcp.servers.x.command: must be a non-empty string"}},
		{"server args", `{mcp: {servers: {x: {command: "a", args: "b"}}}}`, []string{"mcp.servers.x.args: must be an array of strings"}},
		{"server args with url", `{mcp: {servers: {x: {url: "http://h", args: []}}}}`, []string{"mcp.servers.x.args: only applies to a server with a command"}},
		{"server headers with command", `{mcp: {servers: {x: {command: "a", headers: {}}}}}`, []string{"mcp.servers.x.headers: only applies to a server with a url"}},
		{"server env name", `{mcp: {servers: {x: {command: "a", env: {"1X": "v"}}}}}`, []string{"mcp.servers.x.env.1X: must be an environment variable name (letters, digits and _, not starting with a digit)"}},
		{"server env value", `{mcp: {servers: {x: {command: "a", env: {K: 1}}}}}`, []string{`mcp.servers.x.env.K: must be a string or a SecretRef: {"$env": "NAME"} or {"$file": "/path"}`}},
		{"secretref with two keys", `{mcp: {servers: {x: {command: "a", env: {K: {"$env": "A", "$file": "/b"}}}}}}`, []string{`mcp.servers.x.env.K: must be a string or a SecretRef: {"$env": "NAME"} or {"$file": "/path"}`}},
		{"secretref env name", `{mcp: {servers: {x: {command: "a", env: {K: {"$env": "A-B"}}}}}}`, []string{"mcp.servers.x.env.K: $env must name an environment variable (letters, digits and _, not starting with a digit)"}},
		{"header name", `{mcp: {servers: {x: {url: "http://h", headers: {"A B": "v"}}}}}`, []string{"mcp.servers.x.headers.A B: must be an HTTP header name"}},
		{"provider header line break", `{models: {providers: {x: {headers: {"X-Foo": "a\r\nX-Injected: b", Tab: "a\tb", Latin: "caf\u00e9"}}}}}`, []string{"models.providers.x.headers.X-Foo: must not hold a line break"}},
		{"provider header lone LF", `{models: {providers: {x: {headers: {"X-Foo": "a\nb"}}}}}`, []string{"models.providers.x.headers.X-Foo: must not hold a line break"}},
		{"provider header NUL", `{models: {providers: {x: {headers: {"X-Foo": "a\u0000b"}}}}}`, []string{"models.providers.x.headers.X-Foo: must not hold a control character other than tab"}},
		{"provider header escape", `{models: {providers: {x: {headers: {"X-Foo": "\u001b[31m"}}}}}`, []string{"models.providers.x.headers.X-Foo: must not hold a control character other than tab"}},
		{"provider header DEL", `{models: {providers: {x: {headers: {"X-Foo": "a\u007f"}}}}}`, []string{"models.providers.x.headers.X-Foo: must not hold a control character other than tab"}},
		{"server header line break", `{mcp: {servers: {x: {url: "http://h", headers: {Authorization: "Bearer t\r", "X.Y": "\n"}}}}}`, []string{
			"mcp.servers.x.headers.Authorization: must not hold a line break",
			`mcp.servers.x.headers["X.Y"]: must not hold a line break`}},
		{"server enabled", `{mcp: {servers: {x: {command: "a", enabled: "no"}}}}`, []string{"mcp.servers.x.enabled: must be a boolean"}},
		{"server timeout", `{mcp: {servers: {x: {command: "a", timeoutMs: 1.5}}}}`, []string{"mcp.servers.x.timeoutMs: must be an integer from 1 to 86400000"}},
		{"server unknown key", `{mcp: {servers: {x: {command: "a", argv: []}}}}`, []string{"mcp.servers.x.argv: unknown key (did you mean args?)"}},
		{"server connect timeout", `{mcp: {servers: {x: {command: "a", connectTimeoutMs: 0}}}}`, []string{"mcp.servers.x.connectTimeoutMs: must be an integer from 1 to 86400000"}},
		{"server inheritEnv", `{mcp: {servers: {x: {command: "a", inheritEnv: "yes"}}}}`, []string{"mcp.servers.x.inheritEnv: must be a boolean"}},
		{"server inheritEnv with url", `{mcp: {servers: {x: {url: "http://h", inheritEnv: true}}}}`, []string{"mcp.servers.x.inheritEnv: only applies to a server with a command"}},
		{"plugin id", `{plugins: {entries: {"a.b": {}}}}`, []string{`plugins.entries["a.b"]: plugin id must match ^[A-Za-z0-9_-]{1,64}$`}},
		{"plugin enabled", `{plugins: {entries: {tavily: {enabled: "true"}}}}`, []string{"plugins.entries.tavily.enabled: must be a boolean"}},
		{"plugin unknown key", `{plugins: {entries: {tavily: {enable: true}}}}`, []string{"plugins.entries.tavily.enable: unknown key (did you mean enabled?)"}},
		{"plugins unknown key", `{plugins: {allow: []}}`, []string{"plugins.allow: unknown key (known keys: entries)"}},
		{"plugin config not finite", `{plugins: {entries: {x: {config: {a: [1, NaN]}}}}}`, []string{"plugins.entries.x.config.a.1: must be a finite number (JSON has no Infinity or NaN)"}},
		{"agents object", `{agents: []}`, []string{"agents: must be an object"}},
		{"agents defaults", `{agents: {defaults: []}}`, []string{"agents.defaults: must be an object"}},
		{"agents list", `{agents: {list: {}}}`, []string{"agents.list: must be an array"}},
		{"agents unknown", `{agents: {default: {}}}`, []string{"agents.default: unknown key (did you mean defaults?)"}},
		{"agents defaults model", `{agents: {defaults: {model: "gpt-5"}}}`, []string{`agents.defaults.model: must be "<provider>/<model>" (for example openai/gpt-5.2)`}},
		{"agents defaults unknown", `{agents: {defaults: {thinkingDefalt: "high"}}}`, []string{"agents.defaults.thinkingDefalt: unknown key (did you mean thinkingDefault?)"}},
		{"agents thinking level", `{agents: {defaults: {thinkingDefault: "big"}}}`, []string{"agents.defaults.thinkingDefault: must be one of off, minimal, low, medium, high, xhigh, adaptive, max"}},
		{"agents maxSteps", `{agents: {defaults: {maxSteps: 0}}}`, []string{"agents.defaults.maxSteps: must be an integer from 1 to 1000"}},
		{"agents list id", `{agents: {list: [{model: "openai/gpt-5"}]}}`, []string{"agents.list[0].id: is required"}},
		{"agents list dup", `{agents: {list: [{id: "a"}, {id: "a"}]}}`, []string{"agents.list[1].id: duplicate agent id a"}},
		{"agents params fastMode", `{agents: {defaults: {models: {"openai/gpt-5": {params: {fastMode: "yes"}}}}}}`, []string{`agents.defaults.models.openai/gpt-5.params.fastMode: must be a boolean`}},
		{"agents params fastAutoOnSeconds", `{agents: {defaults: {models: {"openai/gpt-5": {params: {fastAutoOnSeconds: "60"}}}}}}`, []string{`agents.defaults.models.openai/gpt-5.params.fastAutoOnSeconds: must be a number of seconds, 0 or more`}},
		{"agents params fast_seconds", `{agents: {defaults: {models: {"openai/gpt-5": {params: {fast_seconds: -1}}}}}}`, []string{`agents.defaults.models.openai/gpt-5.params.fast_seconds: must be a number of seconds, 0 or more`}},
		{"agents params key", `{agents: {defaults: {models: {"gpt-5": {params: {}}}}}}`, []string{`agents.defaults.models.gpt-5: key must be "<provider>/<model>" (for example openai/gpt-5.2)`}},
		{"models providers", `{models: {providers: []}}`, []string{"models.providers: must be an object"}},
		{"models provider api", `{models: {providers: {x: {api: "openai"}}}}`, []string{"models.providers.x.api: must be one of openai-completions, openai-responses, anthropic-messages, google-generative-ai, ollama"}},
		{"models provider url", `{models: {providers: {x: {baseUrl: "ftp://a"}}}}`, []string{"models.providers.x.baseUrl: must be an http or https URL"}},
		{"models provider unknown", `{models: {providers: {x: {baseURL: "http://a"}}}}`, []string{"models.providers.x.baseURL: unknown key (did you mean baseUrl?)"}},
		{"models model id", `{models: {providers: {x: {models: [{name: "n"}]}}}}`, []string{"models.providers.x.models[0].id: is required"}},
		{"models model type", `{models: {providers: {x: {models: [{id: "m", maxTokens: "8"}]}}}}`, []string{"models.providers.x.models[0].maxTokens: must be an integer >= 1"}},
		{"models compat", `{models: {providers: {x: {models: [{id: "m", compat: {supportedReasoningEfforts: ["huge"]}}]}}}}`, []string{"models.providers.x.models[0].compat.supportedReasoningEfforts[0]: must be one of off, minimal, low, medium, high, xhigh, adaptive, max"}},
		{"models apiKey", `{models: {providers: {x: {apiKey: 5}}}}`, []string{`models.providers.x.apiKey: must be a string or a SecretRef: {"$env": "NAME"} or {"$file": "/path"}`}},
		{"gateway listen", `{gateway: {listen: "8787"}}`, []string{"gateway.listen: must be host:port (for example 127.0.0.1:8787)"}},
		{"gateway listen port", `{gateway: {listen: "localhost:99999"}}`, []string{"gateway.listen: must be host:port (for example 127.0.0.1:8787)"}},
		{"gateway token empty", `{gateway: {auth: {token: ""}}}`, []string{"gateway.auth.token: must not be empty"}},
		{"gateway token type", `{gateway: {auth: {token: 12345}}}`, []string{`gateway.auth.token: must be a string or a SecretRef: {"$env": "NAME"} or {"$file": "/path"}`}},
		{"gateway maxSessions", `{gateway: {maxSessions: 0}}`, []string{"gateway.maxSessions: must be an integer from 1 to 100000"}},
		{"gateway maxSessions type", `{gateway: {maxSessions: "many"}}`, []string{"gateway.maxSessions: must be an integer from 1 to 100000"}},
		{"null is not a value for typed keys", `{tools: {allow: null}}`, []string{"tools.allow: must be an array of strings"}},
		{
			"every error is reported, sorted by path",
			`{gateway: {listen: 1}, tools: {toolSearch: {mode: "x"}, discoveryMode: "x"}, mcp: {servers: {x: {}}}}`,
			[]string{
				"gateway.listen: must be a string",
				"mcp.servers.x: needs either command or url",
				"tools.discoveryMode: must be one of off, auto, all, mcp-only",
				"tools.toolSearch.mode: must be one of code, tools",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.in))
			if cfg != nil {
				t.Errorf("Parse returned a Config along with errors")
			}
			if diff := cmp.Diff(tt.want, messages(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			var e *Error
			if !errors.As(err, &e) || e.Error() != tt.want[0] {
				t.Errorf("errors.As(*Error) = %v, want %q", e, tt.want[0])
			}
		})
	}
}

func TestSyntaxError(t *testing.T) {
	_, err := Parse([]byte("{\n  tools: {\n    allow: ['a' 'b'],\n  },\n}"))
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *SyntaxError", err)
	}
	if want := "3:17: unexpected '\\'', expected ',' or ']' after array element"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestDefaults(t *testing.T) {
	for _, in := range []string{"", "  \n", "// nothing\n", "{}"} {
		cfg, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		want := &Config{
			Tools: Tools{
				DiscoveryMode: "auto",
				Web:           Web{Search: WebSearch{CacheTTL: 15 * time.Minute}},
				Exec:          Exec{Timeout: 120 * time.Second, MaxTimeout: 1800 * time.Second, MaxOutputBytes: 1 << 20},
			},
			Gateway: Gateway{Listen: "127.0.0.1:8787"},
		}
		if diff := cmp.Diff(want, cfg, secretCmp); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", in, diff)
		}
	}
}

// TestGlobsAsPolicyReadsThem checks that config accepts the patterns policy can use, which are
// not always path.Match's: a class may end with '-' or start with ']'.
func TestGlobsAsPolicyReadsThem(t *testing.T) {
	cfg, err := Parse([]byte(`{tools: {deny: ["mcp:[a-]*", "[]x]*"], allow: ["mcp:[^x]*"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mcp:[a-]*", "[]x]*"}, cfg.Tools.Deny); diff != "" {
		t.Errorf("deny (-want +got):\n%s", diff)
	}
}

func TestDiscoveryModeLegacyAlias(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{}`, "auto"},
		{`{mcp: {discoveryMode: true}}`, "mcp-only"},
		{`{mcp: {discoveryMode: false}}`, "auto"},
		{`{mcp: {discoveryMode: true}, tools: {discoveryMode: "all"}}`, "all"},
		{`{tools: {discoveryMode: "off"}}`, "off"},
	}
	for _, tt := range tests {
		cfg, err := Parse([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Tools.DiscoveryMode != tt.want {
			t.Errorf("%s: DiscoveryMode = %q, want %q", tt.in, cfg.Tools.DiscoveryMode, tt.want)
		}
	}
}

func TestParseRealistic(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "realistic.json5"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	on, off := true, false
	want := &Config{
		Tools: Tools{
			DiscoveryMode:     "auto",
			EssentialOverride: []string{"exec", "read", "write", "tavily_search"},
			ToolSearch:        json.RawMessage(`{"mode":"tools","codeTimeoutMs":10000,"searchDefaultLimit":8,"maxSearchLimit":20}`),
			Allow:             []string{"nodmix:*", "mcp:github:*", "mcp:fs:*", "mcp:linear:*", "client:client:*"},
			Deny:              []string{"nodmix:core:bash", "mcp:fs:delete_*"},
			Approval:          Approval{Require: []string{"mcp:github:create_*", "mcp:github:merge_*", "nodmix:core:exec"}},
			Hooks: Hooks{BeforeCall: []Hook{
				{Command: []string{"/usr/local/bin/audit-hook", "--json"}, Tools: []string{"mcp:*"}, Timeout: 2 * time.Second},
				{Command: []string{"logger", "-t", "nodmix"}, Tools: []string{"*"}, Timeout: 5 * time.Second},
			}},
			Web:  Web{Search: WebSearch{Provider: "tavily", CacheTTL: 15 * time.Minute, MaxResults: 5}},
			Exec: Exec{Timeout: 120 * time.Second, MaxTimeout: 1800 * time.Second, MaxOutputBytes: 1048576},
		},
		MCP: MCP{
			DiscoveryDefaultServers: []string{"github", "fs"},
			Servers: map[string]MCPServer{
				"github": {
					URL:     "https://api.githubcopilot.com/mcp/",
					Headers: map[string]Secret{"Authorization": {env: "GITHUB_MCP_TOKEN", present: true, path: "mcp.servers.github.headers.Authorization", dir: "testdata"}},
					Enabled: true, Timeout: 30 * time.Second,
				},
				"fs": {
					Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv/projects"},
					Env:     map[string]Secret{"NODE_OPTIONS": {literal: "--max-old-space-size=512", present: true, path: "mcp.servers.fs.env.NODE_OPTIONS", dir: "testdata"}},
					Enabled: true, Timeout: time.Minute,
				},
				"linear": {
					URL: "https://mcp.linear.app/mcp",
					Headers: map[string]Secret{
						"Authorization": {literal: "Bearer lin_api_0123456789abcdef", present: true, path: "mcp.servers.linear.headers.Authorization", dir: "testdata"},
						"X-Client":      {literal: "nodmix", present: true, path: "mcp.servers.linear.headers.X-Client", dir: "testdata"},
					},
					Enabled: true, Timeout: time.Minute,
				},
				"memory": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}, Enabled: false, Timeout: time.Minute},
				"postgres": {
					Command: "uvx", Args: []string{"mcp-server-postgres"}, Cwd: "/srv",
					Env: map[string]Secret{
						"DATABASE_URL": {file: "/run/secrets/database_url", present: true, path: "mcp.servers.postgres.env.DATABASE_URL", dir: "testdata"},
						"PGSSLMODE":    {literal: "require", present: true, path: "mcp.servers.postgres.env.PGSSLMODE", dir: "testdata"},
					},
					Enabled: true, Timeout: 2 * time.Minute,
				},
			},
		},
		Plugins: Plugins{Entries: map[string]PluginEntry{
			"tavily":     {Enabled: &on, Config: json.RawMessage(`{"webSearch":{"apiKey":"tvly-dev-0123456789abcdef","baseUrl":"https://api.tavily.com"}}`)},
			"tokenjuice": {Enabled: &on},
		}},
		Agents: Agents{
			Defaults: json.RawMessage(`{"model":"anthropic/claude-sonnet-4-5","thinkingDefault":"low","heartbeat":{"includeReasoning":false}}`),
			List: []json.RawMessage{
				json.RawMessage(`{"id":"main","reasoningDefault":"off"}`),
				json.RawMessage(`{"id":"research","thinkingDefault":"high","tools":{"allow":["tavily_*"]}}`),
			},
			Default: AgentSettings{Model: "anthropic/claude-sonnet-4-5", ThinkingDefault: "low", HeartbeatReasoning: &off},
			Each: []AgentSettings{
				{ID: "main", ReasoningDefault: "off"},
				{ID: "research", ThinkingDefault: "high", Allow: []string{"tavily_*"}},
			},
		},
		Gateway: Gateway{Listen: "127.0.0.1:8787", Auth: GatewayAuth{Token: Secret{env: "NODMIX_GATEWAY_TOKEN", present: true, path: "gateway.auth.token", dir: "testdata"}}},
	}
	// Parse has no directory; decodeText with one stands in for Load.
	_, cfg, err = decodeText(data, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, cfg, secretCmp); diff != "" {
		t.Errorf("decoded config (-want +got):\n%s", diff)
	}
	if got := cfg.MCP.ServerNames(); !cmp.Equal(got, []string{"fs", "github", "linear", "memory", "postgres"}) {
		t.Errorf("ServerNames() = %v", got)
	}
}

func TestErrorsHelper(t *testing.T) {
	a, b := &Error{Path: "a", Rule: "x"}, &Error{Path: "b", Rule: "y"}
	err := errors.Join(a, errors.Join(b), errors.New("other"))
	if got := Errors(err); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("Errors() = %v", got)
	}
	if Errors(nil) != nil {
		t.Error("Errors(nil) is not nil")
	}
	if got := (&Error{Rule: "must be an object"}).Error(); got != "(root): must be an object" {
		t.Errorf("root error = %q", got)
	}
}
