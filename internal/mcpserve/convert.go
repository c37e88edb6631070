package mcpserve

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// objectArgs checks that tool arguments are a JSON object; absent or null means {}.
func objectArgs(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage(`{}`), nil
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf(`"arguments" must be a JSON object, not %s`, valueKind(trimmed))
	}
	if !json.Valid(trimmed) {
		return nil, fmt.Errorf(`"arguments" is not valid JSON`)
	}
	return trimmed, nil
}

// objectSchema returns an input schema the SDK accepts and clients can use: the tool's own when it
// is an object schema; with "type":"object" added when the type is missing; a permissive object
// schema when it is something else or not JSON at all.
func objectSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	switch m["type"] {
	case "object":
		return raw
	case nil:
		m["type"] = "object"
		if b, err := json.Marshal(m); err == nil {
			return b
		}
	}
	return json.RawMessage(`{"type":"object"}`)
}

// toCallResult converts a catalog result. Text parts are built directly; other parts are decoded
// from the MCP JSON the source kept in Raw, so images and resources pass through unchanged.
func toCallResult(r *catalog.Result) (*mcp.CallToolResult, error) {
	if r == nil {
		return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
	}
	out := &mcp.CallToolResult{IsError: r.IsError, Content: make([]mcp.Content, 0, len(r.Content))}
	var raws []json.RawMessage
	for _, c := range r.Content {
		if len(c.Raw) == 0 {
			out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
			continue
		}
		raws = append(raws, c.Raw)
		out.Content = append(out.Content, nil) // filled below, in order
	}
	if len(raws) > 0 {
		var decoded mcp.CallToolResult
		wire, err := json.Marshal(map[string]any{"content": raws})
		if err == nil {
			err = json.Unmarshal(wire, &decoded)
		}
		if err != nil || len(decoded.Content) != len(raws) {
			return nil, fmt.Errorf("tool result content is not valid MCP content: %v", err)
		}
		j := 0
		for i := range out.Content {
			if out.Content[i] == nil {
				out.Content[i] = decoded.Content[j]
				j++
			}
		}
	}
	if len(r.Structured) > 0 {
		out.StructuredContent = r.Structured
	}
	return out, nil
}
