package config

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/config/json5"
	"github.com/nodmix/nodmix/internal/glob"
	"github.com/nodmix/nodmix/internal/levenshtein"
)

// The rules of names and ids that are, or become part of, model-facing tool names.
const (
	nameRule       = "name must match " + catalog.NamePattern
	pluginIDRule   = "plugin id must match " + catalog.NamePattern
	providerIDRule = "provider id must match " + catalog.NamePattern
)

// Upper bounds where the documentation gives none: large enough for any real use, small enough
// that a typo (an extra few zeros) is caught and durations cannot overflow.
const (
	maxTimeoutMs       = 24 * 60 * 60 * 1000
	maxTimeoutSeconds  = 24 * 60 * 60
	maxCacheTTLMinutes = 30 * 24 * 60
	maxOutputBytes     = 1 << 30
	noMax              = -1
)

// decoder walks the parsed tree into a Config, collecting every rule broken on the way.
// Invalid values leave the default in place so the rest can still be checked.
type decoder struct {
	src  []byte
	dir  string
	errs []*Error
}

func (d *decoder) fail(path, rule string) { d.errs = append(d.errs, &Error{Path: path, Rule: rule}) }

// join names key under path as config set takes it back: a key holding a dot (a model id such
// as openai/gpt-5.2) is quoted in brackets.
func join(path, key string) string { return json5.JoinPath(path, key) }

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// field is a known key of an object section and what to do with its value.
type field struct {
	name string
	fn   func(path string, v *json5.Node)
}

// object checks that n is an object whose keys are all known and not repeated, and hands each
// value to its field. It reports whether n was an object.
func (d *decoder) object(path string, n *json5.Node, fields ...field) bool {
	return d.each(path, n, func(p, key string, v *json5.Node) {
		for _, f := range fields {
			if f.name == key {
				f.fn(p, v)
				return
			}
		}
		d.fail(p, unknownKeyRule(key, fields))
	})
}

// each checks that n is an object without repeated keys and calls fn for every member.
func (d *decoder) each(path string, n *json5.Node, fn func(path, key string, v *json5.Node)) bool {
	if n.Kind != json5.Object {
		d.fail(path, "must be an object")
		return false
	}
	seen := make(map[string]bool, len(n.Members))
	for _, m := range n.Members {
		p := join(path, m.Key)
		if seen[m.Key] {
			d.fail(p, "duplicate key")
			continue
		}
		seen[m.Key] = true
		fn(p, m.Key, m.Value)
	}
	return true
}

func unknownKeyRule(key string, fields []field) string {
	names := make([]string, len(fields))
	best, bestDist := "", 3
	for i, f := range fields {
		names[i] = f.name
		if dist := levenshtein.Distance(strings.ToLower(key), strings.ToLower(f.name)); dist < bestDist {
			best, bestDist = f.name, dist
		}
	}
	if best != "" {
		return "unknown key (did you mean " + best + "?)"
	}
	return "unknown key (known keys: " + strings.Join(names, ", ") + ")"
}

func (d *decoder) str(path string, n *json5.Node, dst *string) bool {
	if n.Kind != json5.String {
		d.fail(path, "must be a string")
		return false
	}
	*dst = n.Str
	return true
}

func (d *decoder) nonEmpty(path string, n *json5.Node, dst *string) bool {
	if n.Kind != json5.String || n.Str == "" {
		d.fail(path, "must be a non-empty string")
		return false
	}
	*dst = n.Str
	return true
}

func (d *decoder) boolean(path string, n *json5.Node, dst *bool) bool {
	if n.Kind != json5.Bool {
		d.fail(path, "must be a boolean")
		return false
	}
	*dst = n.Bool
	return true
}

func intRule(lo, hi int) string {
	if hi == noMax {
		return fmt.Sprintf("must be an integer >= %d", lo)
	}
	return fmt.Sprintf("must be an integer from %d to %d", lo, hi)
}

func (d *decoder) integer(path string, n *json5.Node, lo, hi int, dst *int) bool {
	if !n.IsInt() || n.Num < float64(lo) || (hi != noMax && n.Num > float64(hi)) {
		d.fail(path, intRule(lo, hi))
		return false
	}
	*dst = int(n.Num)
	return true
}

func (d *decoder) duration(path string, n *json5.Node, lo, hi int, unit time.Duration, dst *time.Duration) bool {
	var v int
	if !d.integer(path, n, lo, hi, &v) {
		return false
	}
	*dst = time.Duration(v) * unit
	return true
}

func (d *decoder) enum(path string, n *json5.Node, dst *string, options ...string) bool {
	if n.Kind == json5.String {
		for _, o := range options {
			if n.Str == o {
				*dst = o
				return true
			}
		}
	}
	d.fail(path, "must be one of "+strings.Join(options, ", "))
	return false
}

func (d *decoder) strings(path string, n *json5.Node, dst *[]string) bool {
	if n.Kind != json5.Array {
		d.fail(path, "must be an array of strings")
		return false
	}
	out := make([]string, 0, len(n.Elems))
	for _, e := range n.Elems {
		if e.Kind != json5.String {
			d.fail(path, "must be an array of strings")
			return false
		}
		out = append(out, e.Str)
	}
	*dst = out
	return true
}

// globs reads an array of glob patterns in path.Match syntax ('*', '?', '[...]').
func (d *decoder) globs(path string, n *json5.Node, dst *[]string) bool {
	var pats []string
	if !d.strings(path, n, &pats) {
		return false
	}
	ok := true
	for i, p := range pats {
		switch err := glob.Validate(p); {
		case p == "":
			d.fail(index(path, i), "must not be empty")
			ok = false
		case err != nil:
			d.fail(index(path, i), "must be a valid glob pattern (* ? and [...] classes)")
			ok = false
		}
	}
	if ok {
		*dst = pats
	}
	return ok
}

func (d *decoder) secret(p string, n *json5.Node, dst *Secret) bool {
	if n.Kind == json5.Null {
		d.fail(p, secretRule)
		return false
	}
	s, rule := decodeSecret(n)
	if rule != "" {
		d.fail(p, rule)
		return false
	}
	s.path, s.dir = p, d.dir
	*dst = s
	return true
}

// raw keeps a value as compact JSON for a later owner. JSON has no Infinity or NaN, so those are
// refused here rather than by whoever decodes the JSON.
func (d *decoder) raw(path string, n *json5.Node) (json.RawMessage, bool) {
	if at, ok := n.Finite(); !ok {
		p := path
		for _, seg := range at {
			p = join(p, seg)
		}
		d.fail(p, "must be a finite number (JSON has no Infinity or NaN)")
		return nil, false
	}
	return json5.AppendJSON(nil, d.src, n, "", nil), true
}

func (d *decoder) config(root *json5.Node) *Config {
	c := Default()
	var toolsMode string
	d.object("", root,
		field{"tools", func(p string, v *json5.Node) { toolsMode = d.tools(p, v, &c.Tools) }},
		field{"mcp", func(p string, v *json5.Node) { d.mcp(p, v, &c.MCP) }},
		field{"plugins", func(p string, v *json5.Node) { d.plugins(p, v, &c.Plugins) }},
		field{"models", func(p string, v *json5.Node) { d.models(p, v, &c.Models) }},
		field{"agents", func(p string, v *json5.Node) { d.agents(p, v, &c.Agents) }},
		field{"gateway", func(p string, v *json5.Node) { d.gateway(p, v, &c.Gateway) }},
	)
	switch {
	case toolsMode != "":
		c.Tools.DiscoveryMode = toolsMode
	case c.MCP.DiscoveryMode:
		c.Tools.DiscoveryMode = "mcp-only"
	}
	return c
}

// tools decodes the tools section and returns tools.discoveryMode as written ("" if unset).
func (d *decoder) tools(p string, n *json5.Node, t *Tools) (discoveryMode string) {
	d.object(p, n,
		field{"discoveryMode", func(p string, v *json5.Node) {
			d.enum(p, v, &discoveryMode, "off", "auto", "all", "mcp-only")
		}},
		field{"essentialOverride", func(p string, v *json5.Node) { d.strings(p, v, &t.EssentialOverride) }},
		field{"toolSearch", func(p string, v *json5.Node) { d.toolSearch(p, v, t) }},
		field{"allow", func(p string, v *json5.Node) { d.globs(p, v, &t.Allow) }},
		field{"deny", func(p string, v *json5.Node) { d.globs(p, v, &t.Deny) }},
		field{"approval", func(p string, v *json5.Node) {
			d.object(p, v, field{"require", func(p string, v *json5.Node) { d.globs(p, v, &t.Approval.Require) }})
		}},
		field{"hooks", func(p string, v *json5.Node) {
			d.object(p, v, field{"beforeCall", func(p string, v *json5.Node) { d.hooks(p, v, &t.Hooks.BeforeCall) }})
		}},
		field{"web", func(p string, v *json5.Node) {
			d.object(p, v, field{"search", func(p string, v *json5.Node) { d.webSearch(p, v, &t.Web.Search) }})
		}},
		field{"exec", func(p string, v *json5.Node) { d.exec(p, v, &t.Exec) }},
	)
	return discoveryMode
}

func (d *decoder) toolSearch(p string, n *json5.Node, t *Tools) {
	number := func(p string, v *json5.Node) {
		switch {
		case v.Kind != json5.Number:
			d.fail(p, "must be a number")
		case math.IsInf(v.Num, 0) || math.IsNaN(v.Num):
			d.fail(p, "must be a finite number")
		}
	}
	before := len(d.errs)
	switch n.Kind {
	case json5.Bool:
	case json5.Object:
		var enabled bool
		var mode string
		d.object(p, n,
			field{"enabled", func(p string, v *json5.Node) { d.boolean(p, v, &enabled) }},
			field{"mode", func(p string, v *json5.Node) { d.enum(p, v, &mode, "code", "tools") }},
			field{"codeTimeoutMs", number},
			field{"searchDefaultLimit", number},
			field{"maxSearchLimit", number},
		)
		if len(d.errs) > before {
			return
		}
	default:
		d.fail(p, "must be a boolean or an object")
		return
	}
	if raw, ok := d.raw(p, n); ok {
		t.ToolSearch = raw
	}
}

func (d *decoder) hooks(p string, n *json5.Node, dst *[]Hook) {
	if n.Kind != json5.Array {
		d.fail(p, "must be an array of hooks")
		return
	}
	for i, e := range n.Elems {
		hp := index(p, i)
		before := len(d.errs)
		h := Hook{Tools: []string{"*"}, Timeout: DefaultHookTimeout}
		hasCommand := false
		ok := d.object(hp, e,
			field{"command", func(p string, v *json5.Node) {
				hasCommand = true
				var argv []string
				if !d.strings(p, v, &argv) {
					return
				}
				switch {
				case len(argv) == 0:
					d.fail(p, "must be a non-empty array of strings (the program and its arguments)")
				case argv[0] == "":
					d.fail(index(p, 0), "must not be empty")
				default:
					h.Command = argv
				}
			}},
			field{"tools", func(p string, v *json5.Node) {
				var pats []string
				if d.globs(p, v, &pats) {
					if len(pats) == 0 {
						d.fail(p, "must not be empty (leave it out to match every tool)")
						return
					}
					h.Tools = pats
				}
			}},
			field{"timeoutMs", func(p string, v *json5.Node) {
				d.duration(p, v, 1, int(MaxHookTimeout.Milliseconds()), time.Millisecond, &h.Timeout)
			}},
		)
		if ok && !hasCommand {
			d.fail(join(hp, "command"), "is required")
		}
		if len(d.errs) == before {
			*dst = append(*dst, h)
		}
	}
}

func (d *decoder) webSearch(p string, n *json5.Node, w *WebSearch) {
	d.object(p, n,
		field{"provider", func(p string, v *json5.Node) { d.nonEmpty(p, v, &w.Provider) }},
		field{"cacheTtlMinutes", func(p string, v *json5.Node) {
			d.duration(p, v, 0, maxCacheTTLMinutes, time.Minute, &w.CacheTTL)
		}},
		field{"maxResults", func(p string, v *json5.Node) { d.integer(p, v, 1, 20, &w.MaxResults) }},
	)
}

func (d *decoder) exec(p string, n *json5.Node, e *Exec) {
	timeoutSet := false
	d.object(p, n,
		field{"timeoutSeconds", func(p string, v *json5.Node) {
			timeoutSet = d.duration(p, v, 1, maxTimeoutSeconds, time.Second, &e.Timeout)
		}},
		field{"maxTimeoutSeconds", func(p string, v *json5.Node) {
			d.duration(p, v, 1, maxTimeoutSeconds, time.Second, &e.MaxTimeout)
		}},
		field{"maxOutputBytes", func(p string, v *json5.Node) { d.integer(p, v, 1, maxOutputBytes, &e.MaxOutputBytes) }},
		field{"env", func(p string, v *json5.Node) {
			e.Env = d.secretMap(p, v, func(key string) string {
				if envName().MatchString(key) {
					return ""
				}
				return "must be an environment variable name (letters, digits and _, not starting with a digit)"
			})
		}},
	)
	if e.Timeout <= e.MaxTimeout {
		return
	}
	if timeoutSet {
		d.fail(join(p, "timeoutSeconds"), fmt.Sprintf("must not exceed %s (%d)", join(p, "maxTimeoutSeconds"), e.MaxTimeout/time.Second))
		return
	}
	d.fail(join(p, "maxTimeoutSeconds"), fmt.Sprintf("must be at least %s (%d by default)", join(p, "timeoutSeconds"), e.Timeout/time.Second))
}

func (d *decoder) mcp(p string, n *json5.Node, m *MCP) {
	d.object(p, n,
		field{"discoveryMode", func(p string, v *json5.Node) { d.boolean(p, v, &m.DiscoveryMode) }},
		field{"discoveryDefaultServers", func(p string, v *json5.Node) { d.strings(p, v, &m.DiscoveryDefaultServers) }},
		field{"servers", func(p string, v *json5.Node) {
			m.Servers = map[string]MCPServer{}
			d.each(p, v, func(p, name string, v *json5.Node) {
				if !catalog.ValidServerName(name) {
					d.fail(p, catalog.ServerNameRule)
					return
				}
				if s, ok := d.server(p, v); ok {
					m.Servers[name] = s
				}
			})
		}},
	)
}

func (d *decoder) server(p string, n *json5.Node) (MCPServer, bool) {
	s := MCPServer{Enabled: true, Timeout: DefaultServerTimeout}
	var stdioOnly, httpOnly []string // keys present that need a command, or a url
	before := len(d.errs)
	var hasCommand, hasURL bool
	ok := d.object(p, n,
		field{"command", func(p string, v *json5.Node) { hasCommand = true; d.nonEmpty(p, v, &s.Command) }},
		field{"args", func(p string, v *json5.Node) { stdioOnly = append(stdioOnly, p); d.strings(p, v, &s.Args) }},
		field{"env", func(p string, v *json5.Node) {
			stdioOnly = append(stdioOnly, p)
			s.Env = d.secretMap(p, v, func(key string) string {
				if envName().MatchString(key) {
					return ""
				}
				return "must be an environment variable name (letters, digits and _, not starting with a digit)"
			})
		}},
		field{"cwd", func(p string, v *json5.Node) { stdioOnly = append(stdioOnly, p); d.nonEmpty(p, v, &s.Cwd) }},
		field{"url", func(p string, v *json5.Node) {
			hasURL = true
			if d.nonEmpty(p, v, &s.URL) {
				if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					d.fail(p, "must be an http or https URL")
				}
			}
		}},
		field{"headers", func(p string, v *json5.Node) {
			httpOnly = append(httpOnly, p)
			s.Headers = d.headerMap(p, v)
		}},
		field{"enabled", func(p string, v *json5.Node) { d.boolean(p, v, &s.Enabled) }},
		field{"timeoutMs", func(p string, v *json5.Node) {
			d.duration(p, v, 1, maxTimeoutMs, time.Millisecond, &s.Timeout)
		}},
		field{"connectTimeoutMs", func(p string, v *json5.Node) {
			d.duration(p, v, 1, maxTimeoutMs, time.Millisecond, &s.ConnectTimeout)
		}},
		field{"inheritEnv", func(p string, v *json5.Node) { stdioOnly = append(stdioOnly, p); d.boolean(p, v, &s.InheritEnv) }},
	)
	if !ok {
		return s, false
	}
	switch {
	case hasCommand && hasURL:
		d.fail(p, "needs either command or url, not both")
	case !hasCommand && !hasURL:
		d.fail(p, "needs either command or url")
	case hasURL:
		for _, k := range stdioOnly {
			d.fail(k, "only applies to a server with a command")
		}
	case hasCommand:
		for _, k := range httpOnly {
			d.fail(k, "only applies to a server with a url")
		}
	}
	return s, len(d.errs) == before
}

// secretMap decodes an object of secrets whose keys keyRule accepts ("" means fine).
func (d *decoder) secretMap(p string, n *json5.Node, keyRule func(string) string) map[string]Secret {
	out := map[string]Secret{}
	d.each(p, n, func(p, key string, v *json5.Node) {
		if rule := keyRule(key); rule != "" {
			d.fail(p, rule)
			return
		}
		var s Secret
		if d.secret(p, v, &s) {
			out[key] = s
		}
	})
	return out
}

// headerMap decodes an object of HTTP headers: names RFC 9110 tokens, values secrets whose text,
// when it is in the file, a request can carry. A line break in a value would end the header early
// (Go's client then refuses the request, and the turn fails with a network hint), so it is refused
// here, where the path can be named. A reference is resolved only when it is used.
func (d *decoder) headerMap(p string, n *json5.Node) map[string]Secret {
	out := d.secretMap(p, n, func(key string) string {
		if isHeaderName(key) {
			return ""
		}
		return "must be an HTTP header name"
	})
	for _, m := range n.Members {
		if s, ok := out[m.Key]; ok {
			if rule := headerValueRule(s.literal); rule != "" {
				d.fail(join(p, m.Key), rule)
				delete(out, m.Key)
			}
		}
	}
	return out
}

// headerValueRule is the rule an HTTP header value breaks, or "": RFC 9110 field values hold no
// control characters but tab (obs-text, bytes of 0x80 and up, is allowed).
func headerValueRule(v string) string {
	if strings.ContainsAny(v, "\r\n") {
		return "must not hold a line break"
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return "must not hold a control character other than tab"
		}
	}
	return ""
}

// isHeaderName checks the RFC 9110 token syntax.
func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func (d *decoder) plugins(p string, n *json5.Node, pl *Plugins) {
	d.object(p, n, field{"entries", func(p string, v *json5.Node) {
		pl.Entries = map[string]PluginEntry{}
		d.each(p, v, func(p, id string, v *json5.Node) {
			if !catalog.ValidName(id) {
				d.fail(p, pluginIDRule)
				return
			}
			var e PluginEntry
			d.object(p, v,
				field{"enabled", func(p string, v *json5.Node) {
					var on bool
					if d.boolean(p, v, &on) {
						e.Enabled = &on
					}
				}},
				field{"config", func(p string, v *json5.Node) { e.Config, _ = d.raw(p, v) }},
			)
			pl.Entries[id] = e
		})
	}})
}

func (d *decoder) gateway(p string, n *json5.Node, g *Gateway) {
	d.object(p, n,
		field{"listen", func(p string, v *json5.Node) {
			var listen string
			if !d.str(p, v, &listen) {
				return
			}
			host, port, err := net.SplitHostPort(listen)
			if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 || strings.ContainsAny(host, " /") {
				d.fail(p, "must be host:port (for example 127.0.0.1:8787)")
				return
			}
			g.Listen = listen
		}},
		field{"auth", func(p string, v *json5.Node) {
			d.object(p, v, field{"token", func(p string, v *json5.Node) {
				if v.Kind == json5.String && v.Str == "" {
					d.fail(p, "must not be empty")
					return
				}
				d.secret(p, v, &g.Auth.Token)
			}})
		}},
		field{"maxSessions", func(p string, v *json5.Node) { d.integer(p, v, 1, 100000, &g.MaxSessions) }},
	)
}
