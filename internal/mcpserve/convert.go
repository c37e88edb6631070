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

// oneText is a result of one text part, the usual one, in one allocation instead of three.
type oneText struct {
	res     mcp.CallToolResult
	content [1]mcp.Content
	text    mcp.TextContent
}

// toCallResult converts a catalog result. Text parts are built directly; other parts are decoded
// from the MCP JSON the source kept in Raw, so images and resources pass through unchanged.
func toCallResult(r *catalog.Result) (*mcp.CallToolResult, error) {
	if r == nil {
		return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
	}
	var out *mcp.CallToolResult
	if len(r.Content) == 1 && len(r.Content[0].Raw) == 0 {
		one := &oneText{text: mcp.TextContent{Text: r.Content[0].Text}}
		one.content[0] = &one.text
		out = &one.res
		out.Content = one.content[:]
	} else {
		var err error
		if out, err = convertContent(r.Content); err != nil {
			return nil, err
		}
	}
	out.IsError = r.IsError
	if len(r.Structured) > 0 {
		out.StructuredContent = r.Structured
	}
	return out, nil
}

// convertContent returns a result with parts, in order. The raw parts are decoded together, by
// the SDK's decoder of a result's content, from JSON put together here.
func convertContent(parts []catalog.Content) (*mcp.CallToolResult, error) {
	res := &mcp.CallToolResult{Content: make([]mcp.Content, 0, len(parts))}
	var wire []byte // {"content":[raw,...]}, the raw parts only
	texts := 0
	for _, c := range parts {
		if len(c.Raw) == 0 {
			texts++
			continue
		}
		// Each part one value: spliced, two parts could make up other values.
		if !json.Valid(c.Raw) {
			return nil, fmt.Errorf("tool result content is not valid MCP content: a part is not JSON")
		}
		if wire == nil {
			wire = []byte(`{"content":[`)
		} else {
			wire = append(wire, ',')
		}
		wire = append(wire, c.Raw...)
	}
	var decoded mcp.CallToolResult
	if wire != nil {
		wire = append(wire, "]}"...)
		err := json.Unmarshal(wire, &decoded)
		if err != nil || len(decoded.Content) != len(parts)-texts {
			return nil, fmt.Errorf("tool result content is not valid MCP content: %v", err)
		}
	}
	textParts := make([]mcp.TextContent, texts) // one allocation for all of them
	for _, c := range parts {
		if len(c.Raw) == 0 {
			t := &textParts[0]
			textParts = textParts[1:]
			t.Text = c.Text
			res.Content = append(res.Content, t)
			continue
		}
		res.Content = append(res.Content, decoded.Content[0])
		decoded.Content = decoded.Content[1:]
	}
	return res, nil
}
