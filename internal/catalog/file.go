package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
func ReadFile(r io.Reader) ([]Tool, error) {
	var tools []Tool
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	line := 0
	seen := map[string]int{}
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var ft fileTool
		if !decodeLine(b, &ft) {
			if err := decodeLineSlow(b, &ft); err != nil {
				return nil, &LineError{line, err}
			}
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
		src := Source(ft.Source)
		switch ft.Source {
		case "":
			src = SourceMCP
		case "nodmix":
			src = SourceBuiltin
		case string(SourceBuiltin), string(SourcePlugin), string(SourceMCP), string(SourceClient):
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
		tools = append(tools, Tool{
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
	}
	if err := sc.Err(); err != nil {
		return nil, &LineError{line + 1, err}
	}
	return tools, nil
}
