package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// The request body, in the order the fields are written. Content blocks are typed structs, or
// json.RawMessage for thinking blocks sent back as they were received.
type wireRequest struct {
	Model       string          `json:"model"`
	MaxTokens   int             `json:"max_tokens"`
	System      string          `json:"system,omitempty"`
	Messages    []wireMessage   `json:"messages"`
	Tools       []wireTool      `json:"tools,omitempty"`
	ToolChoice  *wireToolChoice `json:"tool_choice,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
	Stream      bool            `json:"stream,omitempty"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type imageBlock struct {
	Type   string      `json:"type"`
	Source imageSource `json:"source"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type wireToolChoice struct {
	Type string `json:"type"`
}

// imageOmitted stands in for an image on a text-only endpoint.
const imageOmitted = "[image omitted: this model takes text only]"

// Encode builds a POST /messages request. The body is compact JSON in a fixed field order;
// req.Extra adds fields nodmix does not model (never one it decides), then p is applied.
// Thinking blocks go back only when this dialect produced them; with thinking on, settings the
// API refuses alongside it are adjusted (see fitThinking).
func (d *dialect) Encode(req *llm.Request, p llm.Patch) (*llm.Encoded, error) {
	w := wireRequest{
		Model:     req.Model,
		MaxTokens: d.maxTokens(req),
		System:    req.System,
		Stream:    req.Stream,
	}
	if p.Model != "" {
		w.Model = p.Model
	}
	var err error
	if w.Messages, err = d.messages(req.Messages); err != nil {
		return nil, err
	}
	if w.Tools, err = tools(req.Tools); err != nil {
		return nil, err
	}
	if len(w.Tools) > 0 {
		// tool_choice without tools is refused; with none there is nothing to choose.
		if w.ToolChoice, err = toolChoice(req.ToolChoice); err != nil {
			return nil, err
		}
	}
	w.Temperature = d.temperature(req.Temperature)

	body, err := llm.Marshal(&w)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	if body, err = llm.AddMissing(body, passThroughFields(req.Extra)); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	if body, err = llm.MergePatch(body, p.Body); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	if len(p.Body) > 0 || req.Extra["thinking"] != nil {
		if body, err = fitThinking(body, &w, req.Extra, p.Body); err != nil {
			return nil, fmt.Errorf("anthropic: %w", err)
		}
	}

	h := make(http.Header, 4+len(p.Header))
	h.Set("Anthropic-Version", APIVersion)
	h.Set("Content-Type", "application/json")
	if req.Stream {
		h.Set("Accept", "text/event-stream")
	}
	p.SetHeaders(h)
	return &llm.Encoded{Path: "/messages", Header: h, Body: body}, nil
}

// owned are the fields Encode decides even when it leaves them out: an Extra `stream` on a
// request nodmix reads as one document, or `tools` beside the run's own, would break the call.
var owned = [...]string{"model", "max_tokens", "system", "messages", "tools", "tool_choice", "temperature", "stream"}

// passThroughFields is extra without the owned fields, copied only when it has some.
func passThroughFields(extra map[string]json.RawMessage) map[string]json.RawMessage {
	out, _, _ := llm.PassThrough(extra, owned[:], "", nil) // no member to merge: cannot fail
	return out
}

func (d *dialect) maxTokens(req *llm.Request) int {
	switch {
	case req.MaxTokens > 0:
		return req.MaxTokens
	case d.opt.DefaultMaxTokens > 0:
		return d.opt.DefaultMaxTokens
	}
	return DefaultMaxTokens
}

// temperature clamps t into the endpoint's range rather than letting the request fail: gateway
// clients speak OpenAI's 0–2 scale.
func (d *dialect) temperature(t *float64) *float64 {
	if t == nil || math.IsNaN(*t) {
		return nil
	}
	v := min(max(*t, 0, d.opt.MinTemperature), 1)
	return &v
}

// messages maps the transcript. Tool results become user turns, and consecutive turns of one
// wire role are merged: the API wants all results of one assistant turn in the single user
// message that follows it. A turn left with no blocks (only another dialect's reasoning) is
// dropped rather than sent empty.
func (d *dialect) messages(in []llm.Message) ([]wireMessage, error) {
	out := make([]wireMessage, 0, len(in))
	for i := range in {
		m := &in[i]
		var role string
		switch m.Role {
		case llm.RoleUser, llm.RoleTool:
			role = "user"
		case llm.RoleAssistant:
			role = "assistant"
		default:
			return nil, fmt.Errorf("anthropic: message %d: unknown role %q", i, m.Role)
		}
		blocks, err := d.blocks(m, i)
		if err != nil {
			return nil, err
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, wireMessage{Role: role, Content: blocks})
	}
	return out, nil
}

func (d *dialect) blocks(m *llm.Message, i int) ([]any, error) {
	blocks := make([]any, 0, len(m.Parts))
	for j := range m.Parts {
		p := &m.Parts[j]
		switch p.Kind {
		case llm.KindText:
			if p.Text != "" { // the API refuses empty text blocks
				blocks = append(blocks, textBlock{Type: "text", Text: p.Text})
			}
		case llm.KindImage:
			if d.opt.TextOnly {
				blocks = append(blocks, textBlock{Type: "text", Text: imageOmitted})
				continue
			}
			src, err := imageSourceOf(p.ImageURL)
			if err != nil {
				return nil, fmt.Errorf("anthropic: message %d part %d: %w", i, j, err)
			}
			blocks = append(blocks, imageBlock{Type: "image", Source: src})
		case llm.KindToolCall:
			blocks = append(blocks, toolUseBlock{Type: "tool_use", ID: p.CallID, Name: p.Name, Input: llm.ObjectArgs(p.Args)})
		case llm.KindToolResult:
			blocks = append(blocks, toolResultBlock{Type: "tool_result", ToolUseID: p.CallID, Content: p.Text, IsError: p.IsError})
		case llm.KindReasoning:
			// Thinking blocks must come back unchanged, signature included, in their place
			// before the tool_use blocks; another dialect's reasoning means nothing here.
			if p.Dialect != Name || len(p.Raw) == 0 {
				continue
			}
			if !json.Valid(p.Raw) {
				return nil, fmt.Errorf("anthropic: message %d part %d: stored thinking block is not JSON", i, j)
			}
			blocks = append(blocks, p.Raw)
		default:
			return nil, fmt.Errorf("anthropic: message %d part %d: unknown part kind %q", i, j, p.Kind)
		}
	}
	return blocks, nil
}

// imageSourceOf maps a part's image URL: a data URL becomes a base64 source, an http(s) URL a
// url source the API fetches itself.
func imageSourceOf(u string) (imageSource, error) {
	if strings.HasPrefix(u, "data:") {
		mediaType, data, err := llm.DataURL(u)
		if err != nil {
			return imageSource{}, fmt.Errorf("image: %w", err)
		}
		if mediaType == "" {
			return imageSource{}, fmt.Errorf("image: data URL has no media type")
		}
		return imageSource{Type: "base64", MediaType: mediaType, Data: data}, nil
	}
	if scheme, _, ok := strings.Cut(u, "://"); ok && (strings.EqualFold(scheme, "https") || strings.EqualFold(scheme, "http")) {
		return imageSource{Type: "url", URL: u}, nil
	}
	return imageSource{}, fmt.Errorf("image: want a data URL or an https URL")
}

func tools(in []llm.Tool) ([]wireTool, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]wireTool, len(in))
	for i, t := range in {
		schema := bytes.TrimSpace(t.Parameters)
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		} else if !json.Valid(schema) {
			return nil, fmt.Errorf("anthropic: tool %q: parameters are not JSON", t.Name)
		} else if schema[0] == '{' && !bytes.Contains(schema, []byte(`"type"`)) {
			// The API refuses an input_schema without its type; a schema that names none
			// (an OpenAI client's "parameters": {}) is an object schema.
			var err error
			if schema, err = llm.AddMissing(schema, objectType); err != nil {
				return nil, fmt.Errorf("anthropic: tool %q: %w", t.Name, err)
			}
		}
		out[i] = wireTool{Name: t.Name, Description: t.Description, InputSchema: schema}
	}
	return out, nil
}

var objectType = map[string]json.RawMessage{"type": json.RawMessage(`"object"`)}

func toolChoice(c string) (*wireToolChoice, error) {
	switch c {
	case "":
		return nil, nil
	case "auto":
		return &wireToolChoice{Type: "auto"}, nil
	case "required":
		return &wireToolChoice{Type: "any"}, nil
	case "none":
		return &wireToolChoice{Type: "none"}, nil
	}
	return nil, fmt.Errorf("anthropic: tool choice %q: want auto, none or required", c)
}

// thinkingView holds the fields fitThinking reads, the only ones its shadow body carries.
type thinkingView struct {
	Thinking *struct {
		Type string `json:"type"`
	} `json:"thinking,omitempty"`
	ToolChoice *struct {
		Type string `json:"type"`
	} `json:"tool_choice,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
}

// fitThinking adjusts a body whose thinking is on to what the API accepts with it: tool_choice
// only auto or none (forcing a tool is refused), and no temperature other than 1. Thinking
// arrives through the patch or Extra, after the dialect chose those fields, so what counts is
// the finished body. Rather than parse all of it, the same steps run on a shadow holding only
// the three fields: Extra (whose only one of them is thinking) and the merge patch act key by
// key, so the shadow ends with the body's own values.
func fitThinking(body []byte, w *wireRequest, extra map[string]json.RawMessage, patch []byte) ([]byte, error) {
	shadow, err := llm.Marshal(struct {
		ToolChoice  *wireToolChoice `json:"tool_choice,omitempty"`
		Temperature *float64        `json:"temperature,omitempty"`
	}{w.ToolChoice, w.Temperature})
	if err != nil {
		return nil, err
	}
	if v, ok := extra["thinking"]; ok {
		if shadow, err = llm.AddMissing(shadow, map[string]json.RawMessage{"thinking": v}); err != nil {
			return nil, err
		}
	}
	if shadow, err = llm.MergePatch(shadow, patch); err != nil {
		return nil, err
	}
	var v thinkingView
	if err := json.Unmarshal(shadow, &v); err != nil {
		return nil, fmt.Errorf("read thinking settings: %w", err)
	}
	if v.Thinking == nil || v.Thinking.Type != "enabled" && v.Thinking.Type != "adaptive" {
		return body, nil
	}
	var fix []string
	if v.ToolChoice != nil && (v.ToolChoice.Type == "any" || v.ToolChoice.Type == "tool") {
		fix = append(fix, `"tool_choice":{"type":"auto","name":null}`)
	}
	if v.Temperature != nil && *v.Temperature != 1 {
		fix = append(fix, `"temperature":null`)
	}
	if len(fix) == 0 {
		return body, nil
	}
	return llm.MergePatch(body, []byte("{"+strings.Join(fix, ",")+"}"))
}
