// Package catalog defines nodmix's tool descriptors, their ids and model-facing names, and the
// immutable snapshot of every tool a run can see, together with the executors that run them.
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// Source says where a tool comes from. It is the first part of a tool id, except that built-in and
// plugin tools share the id prefix "nodmix".
type Source string

const (
	SourceBuiltin Source = "builtin" // compiled into nodmix (exec, bash, web_search, ...)
	SourcePlugin  Source = "plugin"  // contributed by a bundled plugin (tavily_search, ...)
	SourceMCP     Source = "mcp"     // listed by a downstream MCP server
	SourceClient  Source = "client"  // supplied by the client for one run
)

// IDPrefix is the first segment of a tool id for tools of this source.
func (s Source) IDPrefix() string {
	switch s {
	case SourceBuiltin, SourcePlugin:
		return "nodmix"
	default:
		return string(s)
	}
}

// LoadMode says whether a tool is visible from the start or only after discovery.
type LoadMode uint8

const (
	// Discoverable tools may be hidden behind discovery and activated by search.
	Discoverable LoadMode = iota
	// Essential tools are always active; they survive hiding whatever the configuration.
	Essential
	// Hidden tools are internal: never listed in a discovery corpus.
	Hidden
)

func (m LoadMode) String() string {
	switch m {
	case Essential:
		return "essential"
	case Hidden:
		return "hidden"
	default:
		return "discoverable"
	}
}

// Tool describes one tool. Values are immutable once in a Snapshot: callers must not modify them.
type Tool struct {
	ID          string          // "<prefix>:<owner>:<name>", e.g. "mcp:github:create_issue"
	Name        string          // model-facing name, NamePattern
	Label       string          // display label; empty means Name
	Summary     string          // one-line summary; empty means the start of Description
	Description string          // full description
	InputSchema json.RawMessage // JSON Schema of the arguments; nil means {"type":"object"}
	Source      Source
	Owner       string // "core", a plugin id, an MCP server name, or "client"
	Server      string // MCP server name, for SourceMCP
	MCPToolName string // the tool's own name on its MCP server
	LoadMode    LoadMode
}

// DisplayLabel is Label, or Name when there is none.
func (t *Tool) DisplayLabel() string {
	if t.Label != "" {
		return t.Label
	}
	return t.Name
}

// SummaryText is the summary the discovery index and renderers use: the explicit summary, else the
// first 200 UTF-16 code units of the description (the seed counts in JS string units).
func (t *Tool) SummaryText() string {
	if t.Summary != "" {
		return t.Summary
	}
	return PrefixUTF16(t.Description, 200)
}

// PrefixUTF16 returns the longest prefix of s that is at most n UTF-16 code units long, without
// splitting a surrogate pair (JS slice would; nodmix keeps the string valid).
func PrefixUTF16(s string, n int) string {
	// No string has more UTF-16 units than bytes: a string of at most n bytes is kept whole, and n
	// ASCII bytes are n units. Only other text is counted rune by rune.
	if len(s) <= n {
		return s
	}
	i := 0
	for i < n && s[i] < utf8.RuneSelf {
		i++
	}
	if i == n {
		return s[:n]
	}
	return prefixUTF16Runes(s, n)
}

// prefixUTF16Runes is PrefixUTF16, counting every rune.
func prefixUTF16Runes(s string, n int) string {
	units := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if units+w > n {
			return s[:i]
		}
		units += w
	}
	return s
}

// SchemaKeys returns the sorted top-level property names of the input schema, or nil.
func (t *Tool) SchemaKeys() []string {
	if len(t.InputSchema) == 0 {
		return nil
	}
	if keys, ok := rawSchemaKeys(t.InputSchema); ok {
		return keys
	}
	return decodedSchemaKeys(t.InputSchema)
}

// decodedSchemaKeys is SchemaKeys by the standard decoder, for the schemas rawSchemaKeys leaves to it.
func decodedSchemaKeys(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return nil
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Schema returns the input schema, defaulting to an empty object schema.
func (t *Tool) Schema() json.RawMessage {
	if len(t.InputSchema) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return t.InputSchema
}

// Content is one part of a tool result. Text parts carry Text; other kinds (image, audio, resource
// links, embedded resources) are passed through as their MCP JSON in Raw.
type Content struct {
	Type string          `json:"type"`
	Text string          `json:"text,omitempty"`
	Raw  json.RawMessage `json:"-"`
}

// Result is what a tool returns. A failure the model should see is a Result with IsError set, not a
// Go error; Go errors are reserved for failures of nodmix itself or of the transport.
type Result struct {
	Content    []Content       `json:"content"`
	Structured json.RawMessage `json:"structuredContent,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
}

// TextResult is a Result with one text part.
func TextResult(text string) *Result {
	return &Result{Content: []Content{{Type: "text", Text: text}}}
}

// ErrorResult is a failed Result with one text part that the model will read.
func ErrorResult(text string) *Result {
	return &Result{Content: []Content{{Type: "text", Text: text}}, IsError: true}
}

// Text joins the text parts of the result with newlines.
func (r *Result) Text() string {
	if r == nil {
		return ""
	}
	var n int
	for _, c := range r.Content {
		n += len(c.Text) + 1
	}
	b := make([]byte, 0, n)
	for i, c := range r.Content {
		if c.Type != "text" {
			continue
		}
		if i > 0 && len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, c.Text...)
	}
	return string(b)
}

// Call is one invocation of a tool, as an executor receives it.
type Call struct {
	Tool    *Tool
	Args    json.RawMessage // always a JSON object
	Session string          // the session the call belongs to; may be empty
	CallID  string          // unique id of this call, for logs and telemetry
}

// Executor runs a tool. Implementations must be safe for concurrent use; they must honour ctx
// cancellation and return promptly when it is done.
type Executor interface {
	Execute(ctx context.Context, call Call) (*Result, error)
}

// ExecutorFunc adapts a function to Executor.
type ExecutorFunc func(ctx context.Context, call Call) (*Result, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, call Call) (*Result, error) { return f(ctx, call) }

var _ Executor = ExecutorFunc(nil)

// ErrUnavailable is returned (wrapped) by executors whose backend is down, e.g. an MCP server that
// is restarting. Callers test it with errors.Is.
var ErrUnavailable = errors.New("tool unavailable")
