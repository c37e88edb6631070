package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// fileTool is one line of a catalog file (JSON Lines).
type fileTool struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Label       string          `json:"label"`
	Description string          `json:"description"`
	Summary     string          `json:"summary"`
	Source      string          `json:"source"`
	Server      string          `json:"server"`
	MCPToolName string          `json:"mcp_tool_name"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// LineError is a catalog file line that could not be read.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// decodeLineSlow reads a line with the standard decoder, which names what is wrong with it.
func decodeLineSlow(b []byte, ft *fileTool) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(ft); err != nil {
		return fmt.Errorf("not a catalog entry: %w", err)
	}
	if dec.InputOffset() != int64(len(b)) {
		return fmt.Errorf("not a catalog entry: text after the object")
	}
	return nil
}

// ReadFile reads a catalog file: one JSON object a line, blank lines skipped. `source` defaults to
// "mcp"; a tool without a name takes its id. Errors name the line.
//
// It streams: one line at a time, with the fields of every line copied into large shared blocks
// (an arena) rather than one allocation each, and the tools gathered in chunks that are joined
// once at the end instead of a slice that grows by copying itself.
func ReadFile(r io.Reader) ([]Tool, error) {
	var (
		chunks [][]Tool
		cur    []Tool
		a      arena
		n      int
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	line := 0
	seen := map[string]int{}
	var ft fileTool // one for every line: the slow path makes it escape
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		ft = fileTool{}
		if a.decodeLine(b, &ft) {
			if len(ft.InputSchema) > 0 {
				ft.InputSchema = a.bytes(ft.InputSchema)
			}
		} else if err := decodeLineSlow(b, &ft); err != nil {
			return nil, &LineError{line, err}
		}
		if ft.ID == "" {
			return nil, &LineError{line, fmt.Errorf("id: is required")}
		}
		if prev, ok := seen[ft.ID]; ok {
			return nil, &LineError{line, fmt.Errorf("id: %q is already used on line %d", ft.ID, prev)}
		}
		seen[ft.ID] = line
		if ft.Name == "" {
			ft.Name = ft.ID
		}
		var src Source
		switch ft.Source {
		case "", string(SourceMCP):
			src = SourceMCP
		case "nodmix", string(SourceBuiltin):
			src = SourceBuiltin
		case string(SourcePlugin):
			src = SourcePlugin
		case string(SourceClient):
			src = SourceClient
		default:
			return nil, &LineError{line, fmt.Errorf("source: must be one of mcp, builtin, plugin, client")}
		}
		switch {
		case string(ft.InputSchema) == "null":
			ft.InputSchema = nil // as if absent: the tool takes the default object schema
		case len(ft.InputSchema) > 0 && ft.InputSchema[0] != '{':
			// The decoder has checked the JSON; a schema must also be an object.
			return nil, &LineError{line, fmt.Errorf("input_schema: must be a JSON object")}
		}
		owner := ft.Server
		if owner == "" {
			owner = "core"
		}
		if len(cur) == cap(cur) {
			if cur != nil {
				chunks = append(chunks, cur)
			}
			cur = make([]Tool, 0, min(max(2*cap(cur), 64), 2048))
		}
		cur = append(cur, Tool{
			ID:          ft.ID,
			Name:        ft.Name,
			Label:       ft.Label,
			Summary:     ft.Summary,
			Description: ft.Description,
			InputSchema: ft.InputSchema,
			Source:      src,
			Owner:       owner,
			Server:      ft.Server,
			MCPToolName: ft.MCPToolName,
		})
		n++
	}
	if err := sc.Err(); err != nil {
		return nil, &LineError{line + 1, err}
	}
	if n == 0 {
		return nil, nil
	}
	if chunks == nil {
		return cur, nil
	}
	tools := make([]Tool, 0, n)
	for _, c := range chunks {
		tools = append(tools, c...)
	}
	return append(tools, cur...), nil
}

// arenaBlock is the size of an arena's blocks; a value larger than a quarter of it gets its own.
const arenaBlock = 64 << 10

// arena copies the strings and schemas of catalog lines into shared blocks. A block is only ever
// appended to, so what it handed out never changes; it lives as long as any tool that uses it.
type arena struct {
	strs strings.Builder
	buf  []byte
}

// string returns a copy of b.
func (a *arena) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > arenaBlock/4 {
		return string(b)
	}
	if a.strs.Cap()-a.strs.Len() < len(b) {
		a.strs = strings.Builder{}
		a.strs.Grow(arenaBlock)
	}
	start := a.strs.Len()
	a.strs.Write(b)
	return a.strs.String()[start:]
}

// bytes returns a copy of b, with no room to append into a neighbour.
func (a *arena) bytes(b []byte) []byte {
	if len(b) > arenaBlock/4 {
		return bytes.Clone(b)
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, arenaBlock)
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// unquote is the package's unquote, copying into the arena.
func (a *arena) unquote(v []byte, flags uint8) string {
	return unquoteWith(v, flags, a.string)
}
