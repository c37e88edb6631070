// Package toolsearch serves a run's catalog through Tool Search: the structured tools tool_search,
// tool_describe and tool_call, and tool_search_code, whose JavaScript reaches the catalog through a bridge.
package toolsearch

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// Modes of Tool Search: what the model is given up front.
const (
	ModeCode  = "code"  // tool_search_code only
	ModeTools = "tools" // tool_search, tool_describe and tool_call
)

// Defaults and clamps of tools.toolSearch (reference §2.1.2).
const (
	DefaultCodeTimeout    = 10 * time.Second
	MinCodeTimeout        = time.Second
	MaxCodeTimeout        = 60 * time.Second
	DefaultSearchLimit    = 8
	DefaultMaxSearchLimit = 20
	MaxMaxSearchLimit     = 50
)

// Options is the resolved tools.toolSearch configuration of a run. The zero value means the
// defaults; Normalize applies them and the clamps, so callers may pass raw values.
type Options struct {
	Enabled            bool
	Mode               string // ModeCode or ModeTools
	CodeTimeout        time.Duration
	SearchDefaultLimit int
	MaxSearchLimit     int
}

// Normalize returns o with defaults and clamps applied: an unknown mode is code; a non-positive
// value takes its default before clamping; the timeout is clamped to 1–60 s, the maximum limit to
// 1–50 and the default limit to 1–MaxSearchLimit.
func (o Options) Normalize() Options {
	if o.Mode != ModeTools {
		o.Mode = ModeCode
	}
	if o.CodeTimeout <= 0 {
		o.CodeTimeout = DefaultCodeTimeout
	}
	o.CodeTimeout = min(max(o.CodeTimeout, MinCodeTimeout), MaxCodeTimeout)
	if o.MaxSearchLimit <= 0 {
		o.MaxSearchLimit = DefaultMaxSearchLimit
	}
	o.MaxSearchLimit = min(max(o.MaxSearchLimit, 1), MaxMaxSearchLimit)
	if o.SearchDefaultLimit <= 0 {
		o.SearchDefaultLimit = DefaultSearchLimit
	}
	o.SearchDefaultLimit = min(max(o.SearchDefaultLimit, 1), o.MaxSearchLimit)
	return o
}

// Sentinel errors, wrapped by *InputError, for what callers test.
var (
	// ErrUnknownTool: no visible catalog entry has the id or name (the same sentinel dispatch uses).
	ErrUnknownTool = dispatch.ErrUnknownTool
	// ErrAmbiguous: a name or a set of selectors names more than one entry.
	ErrAmbiguous = errors.New("ambiguous tool reference")
	// ErrInvalidArgs: the arguments fail the target tool's input schema.
	ErrInvalidArgs = errors.New("invalid tool arguments")
	// ErrBadRequest: the control tool's own parameters are malformed.
	ErrBadRequest = errors.New("bad tool search request")
)

// InputError is a mistake in what the model sent. Its message is the documented text, shown to the
// model verbatim; Kind is one of the sentinels above.
type InputError struct {
	Msg  string
	Kind error
}

func (e *InputError) Error() string { return e.Msg }
func (e *InputError) Unwrap() error { return e.Kind }

func inputErr(kind error, msg string) error { return &InputError{Msg: msg, Kind: kind} }

// Source names as Tool Search reports them: built-in and plugin tools are both "nodmix".
const (
	SourceNodmix = "nodmix"
	SourceMCP    = "mcp"
	SourceClient = "client"
)

// sourceOf maps a catalog source to its Tool Search name.
func sourceOf(t *catalog.Tool) string {
	switch t.Source {
	case catalog.SourceMCP:
		return SourceMCP
	case catalog.SourceClient:
		return SourceClient
	default:
		return SourceNodmix
	}
}

// trusted reports whether the tool's metadata is nodmix's own: only such schemas are hinted,
// indexed and validated; MCP and client schemas are deferred to describe and to their owners.
func trusted(t *catalog.Tool) bool { return sourceOf(t) == SourceNodmix }

// SourceCounts is the catalog's size per source.
type SourceCounts struct {
	Nodmix int `json:"nodmix"`
	MCP    int `json:"mcp"`
	Client int `json:"client"`
}

func (c *SourceCounts) add(t *catalog.Tool) {
	switch sourceOf(t) {
	case SourceMCP:
		c.MCP++
	case SourceClient:
		c.Client++
	default:
		c.Nodmix++
	}
}

// MCPInfo identifies an MCP tool on its server.
type MCPInfo struct {
	ServerName     string `json:"serverName"`
	SafeServerName string `json:"safeServerName"`
	ToolName       string `json:"toolName"`
}

// Descriptor is a compact catalog entry, safe to put in a prompt: identity, a one-line
// description and a compact input hint ("unknown" for MCP and client tools, whose schemas are not
// trusted). Field order is the documented JSON order.
type Descriptor struct {
	ID          string   `json:"id"`
	Source      string   `json:"source"`
	SourceName  string   `json:"sourceName,omitempty"`
	MCP         *MCPInfo `json:"mcp,omitempty"`
	Name        string   `json:"name"`
	Label       string   `json:"label,omitempty"`
	Description string   `json:"description"`
	Input       string   `json:"input"`
	Output      string   `json:"output,omitempty"`
}

// Description is what tool_describe returns: the descriptor with the full description and the
// exact input schema.
type Description struct {
	Descriptor
	Parameters json.RawMessage `json:"parameters"`
}
