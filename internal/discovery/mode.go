// Package discovery implements search_tool_bm25: tools hidden behind a BM25+ index that a session
// searches, activating the matches for the rest of the session.
package discovery

import (
	"fmt"
	"strings"

	"github.com/nodmix/nodmix/internal/catalog"
)

// Mode is the configured or effective discovery mode.
type Mode string

const (
	Off     Mode = "off"
	Auto    Mode = "auto"
	All     Mode = "all"
	MCPOnly Mode = "mcp-only"
)

// AutoThreshold is the tool count above which auto mode switches discovery on: 40 stays off, 41 is on.
const AutoThreshold = 40

// DefaultLimit is search_tool_bm25's default number of matches.
const DefaultLimit = 8

// ToolName is the wire name of the discovery tool, kept for compatibility with persisted sessions.
const ToolName = "search_tool_bm25"

// defaultEssential are the built-in names that stay active in mode all unless tools.essentialOverride says otherwise.
var defaultEssential = []string{"read", "bash", "edit", "write", "glob", "eval"}

// ParseMode validates a tools.discoveryMode value; empty means auto.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "":
		return Auto, nil
	case Off, Auto, All, MCPOnly:
		return Mode(s), nil
	}
	return "", fmt.Errorf("tools.discoveryMode: must be one of off, auto, all, mcp-only")
}

// Effective resolves the configured mode into off, all or mcp-only. An explicit all or mcp-only
// wins; then the legacy mcp.discoveryMode; then auto switches on above AutoThreshold tools.
// toolCount counts every tool except search_tool_bm25 itself.
func Effective(configured Mode, legacyMCP bool, toolCount int) Mode {
	switch configured {
	case All, MCPOnly:
		return configured
	}
	if legacyMCP {
		return MCPOnly
	}
	if configured == Auto && toolCount > AutoThreshold {
		return MCPOnly
	}
	return Off
}

// Rules say which tools start hidden in a session.
type Rules struct {
	Mode           Mode            // effective: off, all or mcp-only
	Essential      map[string]bool // built-in names that stay active in mode all
	DefaultServers map[string]bool // MCP servers whose tools stay visible (mcp.discoveryDefaultServers)
	// Everything hides every tool but internal ones, whatever its source: a catalog file searched
	// from the command line is all hidden, as in mode all with nothing active yet.
	Everything bool
}

// NewRules builds the rules. essentialOverride, when it names anything, replaces the default
// essential set; names that are not tools in snap are dropped. Names and servers are trimmed and
// empty ones skipped, as the reference reads both lists: an override of only blanks ([""], a
// stray " ") keeps the defaults rather than leaving mode all without read, bash or edit.
func NewRules(mode Mode, essentialOverride, defaultServers []string, snap *catalog.Snapshot) Rules {
	names := trimmed(essentialOverride)
	if len(names) == 0 {
		names = defaultEssential
	}
	r := Rules{Mode: mode, Essential: map[string]bool{}, DefaultServers: map[string]bool{}}
	for _, n := range names {
		if snap == nil {
			r.Essential[n] = true
			continue
		}
		if _, ok := snap.ByName(n); ok {
			r.Essential[n] = true
		}
	}
	for _, s := range trimmed(defaultServers) {
		r.DefaultServers[s] = true
	}
	return r
}

// trimmed returns the entries of list trimmed, without the empty ones.
func trimmed(list []string) []string {
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Enabled reports whether discovery is on.
func (r Rules) Enabled() bool { return r.Mode == All || r.Mode == MCPOnly }

// Hidden reports whether t starts hidden (discoverable but not active).
func (r Rules) Hidden(t *catalog.Tool) bool {
	if !r.Enabled() || t.LoadMode == catalog.Hidden {
		return false
	}
	if r.Everything {
		return true
	}
	if t.LoadMode == catalog.Essential {
		return false
	}
	switch t.Source {
	case catalog.SourceMCP:
		return !r.DefaultServers[t.Server]
	case catalog.SourceBuiltin, catalog.SourcePlugin:
		return r.Mode == All && !r.Essential[t.Name]
	}
	return false
}
