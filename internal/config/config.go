// Package config loads, validates and edits nodmix's JSON5 configuration file: typed settings with
// defaults, strict validation that names the path and the rule, comment-preserving edits, secrets.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nodmix/nodmix/internal/config/json5"
)

// Defaults that the documentation or the design fix.
const (
	DefaultDiscoveryMode     = "auto"
	DefaultListen            = "127.0.0.1:8787"
	DefaultHookTimeout       = 5 * time.Second
	MaxHookTimeout           = 10 * time.Minute // a before-call hook holds its call that long at most
	DefaultServerTimeout     = 60 * time.Second
	DefaultWebCacheTTL       = 15 * time.Minute
	DefaultExecTimeout       = 120 * time.Second
	DefaultExecMaxTimeout    = 1800 * time.Second
	DefaultExecMaxOutputSize = 1 << 20
)

// Config is the validated configuration. Durations and defaults are resolved; sections that
// later steps own (plugin config, agents) are kept as raw JSON. Printing a Config with fmt, or
// marshalling it, never shows a secret's value.
type Config struct {
	Tools   Tools
	MCP     MCP
	Plugins Plugins
	Models  Models
	Agents  Agents
	Gateway Gateway
}

// Tools is the tools section.
type Tools struct {
	// DiscoveryMode is the effective tools.discoveryMode: off, auto, all or mcp-only. When it is
	// not set, the legacy mcp.discoveryMode: true means mcp-only; otherwise it is auto.
	DiscoveryMode     string
	EssentialOverride []string
	// ToolSearch is tools.toolSearch as written, as JSON, or nil when it is not set.
	// Config.ToolSearch resolves it.
	ToolSearch json.RawMessage
	// Allow and Deny are glob patterns over tool ids and names.
	Allow, Deny []string
	Approval    Approval
	Hooks       Hooks
	Web         Web
	Exec        Exec
}

// Approval lists the tools (glob patterns) whose calls need an approval.
type Approval struct {
	Require []string
}

// Hooks are commands run around tool calls.
type Hooks struct {
	BeforeCall []Hook
}

// Hook is one before-call hook: an argv run for the calls whose tool matches Tools.
type Hook struct {
	Command []string
	Tools   []string // glob patterns; ["*"] when not set
	Timeout time.Duration
}

// Web configures the web tools.
type Web struct {
	Search WebSearch
}

// WebSearch configures the web_search tool.
type WebSearch struct {
	Provider   string        // e.g. "tavily"; "" when not set
	CacheTTL   time.Duration // 0 disables the cache
	MaxResults int           // 1..20, or 0 when not set
}

// Exec bounds the exec and bash built-ins and sets what their commands get in their environment.
type Exec struct {
	Timeout        time.Duration
	MaxTimeout     time.Duration
	MaxOutputBytes int
	// Env sets variables for every command, after the ones nodmix withholds as its secrets
	// (SecretEnv) are removed: how a command is given one of them on purpose.
	Env map[string]Secret
}

// MCP configures downstream MCP servers.
type MCP struct {
	// DiscoveryMode is the legacy mcp.discoveryMode flag as written; Tools.DiscoveryMode
	// already accounts for it.
	DiscoveryMode           bool
	DiscoveryDefaultServers []string
	Servers                 map[string]MCPServer
}

// ServerNames returns the configured server names in byte order, for deterministic iteration.
func (m MCP) ServerNames() []string {
	names := make([]string, 0, len(m.Servers))
	for name := range m.Servers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// MCPServer is one downstream server: a command (stdio) or a URL (streamable HTTP), never both.
type MCPServer struct {
	Command string
	Args    []string
	Env     map[string]Secret
	Cwd     string
	URL     string
	Headers map[string]Secret
	Enabled bool // true when not set
	Timeout time.Duration
	// ConnectTimeout bounds one connection attempt (start, initialize, first listing); 0 means
	// the hub's default.
	ConnectTimeout time.Duration
	// InheritEnv passes nodmix's whole environment to a command server instead of the small
	// default set.
	InheritEnv bool
}

// Plugins configures plugins by id.
type Plugins struct {
	Entries map[string]PluginEntry
}

// PluginEntry is plugins.entries.<id>.
type PluginEntry struct {
	// Enabled is nil when not set: the plugin's own default applies.
	Enabled *bool
	// Config is the plugin's config as JSON, or nil; the plugin validates it. Secret-like keys
	// in it may hold SecretRefs, which Secret.UnmarshalJSON understands.
	Config json.RawMessage
}

// Gateway configures the HTTP gateway.
type Gateway struct {
	Listen string // host:port
	Auth   GatewayAuth
	// MaxSessions caps the MCP sessions open over HTTP at once (1–100000); 0 means the
	// default of the MCP server, 1000.
	MaxSessions int
}

// GatewayAuth holds the gateway's bearer token.
type GatewayAuth struct {
	Token Secret
}

// Default returns the configuration of an empty file.
func Default() *Config {
	return &Config{
		Tools: Tools{
			DiscoveryMode: DefaultDiscoveryMode,
			Web:           Web{Search: WebSearch{CacheTTL: DefaultWebCacheTTL}},
			Exec: Exec{
				Timeout:        DefaultExecTimeout,
				MaxTimeout:     DefaultExecMaxTimeout,
				MaxOutputBytes: DefaultExecMaxOutputSize,
			},
		},
		Gateway: Gateway{Listen: DefaultListen},
	}
}

// Error is one validation failure: the dotted path of the offending value (array elements as
// [i]) and the rule it breaks. Its message never contains the value.
type Error struct {
	Path string
	Rule string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "(root): " + e.Rule
	}
	return e.Path + ": " + e.Rule
}

// Errors returns every *Error in err, which may be a single *Error or a tree of joined and
// wrapped errors, in order.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *Error:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// JoinErrors sorts errs by path and rule and joins them; nil when there are none. The plugin host
// joins a plugin's section errors with it, so that they read in the order of the file's own.
func JoinErrors(errs []*Error) error { return joinErrors(errs) }

// joinErrors sorts errs by path and rule and joins them; nil when there are none.
func joinErrors(errs []*Error) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b *Error) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}

// SyntaxError is a JSON5 syntax error with its line and column.
type SyntaxError = json5.SyntaxError

// Parse decodes and validates configuration text. Blank text (only whitespace and comments) is
// the empty configuration. It returns a *SyntaxError, or every validation *Error joined and
// sorted by path.
func Parse(data []byte) (*Config, error) {
	_, cfg, err := decodeText(data, "")
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// decodeText parses and validates text. On validation errors it still returns the tree and a
// best-effort Config (invalid values left at their defaults) along with the joined errors; on a
// syntax error it returns only the error. dir anchors relative $file secrets.
func decodeText(data []byte, dir string) (*json5.Node, *Config, error) {
	if json5.IsBlank(data) {
		return nil, Default(), nil
	}
	root, err := json5.Parse(data)
	if err != nil {
		return nil, nil, err
	}
	d := &decoder{src: data, dir: dir}
	cfg := d.config(root)
	return root, cfg, joinErrors(d.errs)
}

// String renders the entry with secret-like keys of its config masked.
func (e PluginEntry) String() string {
	enabled := "unset"
	if e.Enabled != nil {
		enabled = fmt.Sprint(*e.Enabled)
	}
	return fmt.Sprintf("{Enabled:%s Config:%s}", enabled, maskRaw(e.Config))
}

// Format makes every fmt verb print the masked form.
func (e PluginEntry) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(e.String())) }

// MarshalJSON masks secret-like keys of the plugin config; plugins read Config directly.
func (e PluginEntry) MarshalJSON() ([]byte, error) {
	type entry struct {
		Enabled *bool           `json:"enabled,omitempty"`
		Config  json.RawMessage `json:"config,omitempty"`
	}
	out := entry{Enabled: e.Enabled}
	if len(e.Config) > 0 {
		out.Config = json.RawMessage(maskRaw(e.Config))
	}
	return json.Marshal(out)
}

// String renders the agents section with secret-like keys masked.
func (a Agents) String() string {
	list := make([]string, len(a.List))
	for i, raw := range a.List {
		list[i] = maskRaw(raw)
	}
	return fmt.Sprintf("{Defaults:%s List:[%s]}", maskRaw(a.Defaults), strings.Join(list, " "))
}

// Format makes every fmt verb print the masked form.
func (a Agents) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(a.String())) }

// MarshalJSON masks secret-like keys.
func (a Agents) MarshalJSON() ([]byte, error) {
	type agents struct {
		Defaults json.RawMessage   `json:"defaults,omitempty"`
		List     []json.RawMessage `json:"list,omitempty"`
	}
	var out agents
	if len(a.Defaults) > 0 {
		out.Defaults = json.RawMessage(maskRaw(a.Defaults))
	}
	for _, raw := range a.List {
		out.List = append(out.List, json.RawMessage(maskRaw(raw)))
	}
	return json.Marshal(out)
}
