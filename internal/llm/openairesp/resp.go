// Package openairesp speaks OpenAI's Responses wire format (`api: "openai-responses"`):
// POST /responses, whose reasoning items are sent back whole so a stateless tool loop keeps them.
package openairesp

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/nodmix/nodmix/internal/llm"
)

// Name is the config's `api` value of this dialect.
const Name = "openai-responses"

type dialect struct{}

var _ llm.Dialect = dialect{}

// New returns the Responses dialect. It is stateless and safe for concurrent use.
//
// It sets neither `store` nor `include`: a reasoning model's thinking patch adds
// `store: false` with `include: ["reasoning.encrypted_content"]`, which other models refuse.
func New() llm.Dialect { return dialect{} }

func (dialect) Name() string { return Name }

// meta is what Part.Meta holds for the items this dialect produced: the item's id, which the
// API pairs with the reasoning item before it, and a message's phase, which newer models want
// back on every assistant message.
type meta struct {
	ID    string `json:"id,omitempty"`
	Phase string `json:"phase,omitempty"`
}

// Encode builds POST /responses. See llm.Dialect.
func (dialect) Encode(req *llm.Request, p llm.Patch) (*llm.Encoded, error) {
	body := request{
		Model:           req.Model,
		Instructions:    req.System,
		MaxOutputTokens: req.MaxTokens,
		Temperature:     req.Temperature,
		Stream:          req.Stream,
	}
	if p.Model != "" {
		body.Model = p.Model
	}
	switch req.ToolChoice {
	case "", "auto", "none", "required":
		body.ToolChoice = req.ToolChoice
	default:
		return nil, fmt.Errorf("encode: tool choice %q: want auto, none or required", req.ToolChoice)
	}
	input, err := inputItems(req.Messages)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	body.Input = input
	if len(req.Tools) > 0 {
		body.Tools = make([]tool, len(req.Tools))
		for i, t := range req.Tools {
			params := t.Parameters
			if len(params) == 0 {
				params = emptySchema
			}
			// strict is false: the Responses API makes an omitted strict strict, which rewrites
			// every optional parameter into a required one.
			body.Tools[i] = tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params}
		}
	}

	b, err := llm.Marshal(&body)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	extra, _, _ := llm.PassThrough(req.Extra, owned[:], "", nil) // no member to merge: cannot fail
	if b, err = llm.AddMissing(b, extra); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if b, err = llm.MergePatch(b, p.Body); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if req.Stream {
		h.Set("Accept", "text/event-stream")
	}
	p.SetHeaders(h)
	return &llm.Encoded{Path: "/responses", Header: h, Body: b}, nil
}

// owned are the fields Encode decides even when it leaves them out: an Extra `stream` on a
// request nodmix reads as one document, `tools` beside (or instead of) the run's own, or
// instructions in place of the agent's would break the call. tool_choice is not among them: a
// named function is only expressible through Extra.
var owned = [...]string{"model", "instructions", "input", "tools", "max_output_tokens", "temperature", "stream"}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

func inputItems(msgs []llm.Message) ([]any, error) {
	out := make([]any, 0, len(msgs)*2)
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case llm.RoleUser:
			out = append(out, userMessage{Role: "user", Content: userContent(m.Parts)})
		case llm.RoleAssistant:
			items, err := assistantItems(m.Parts)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			out = append(out, items...)
		case llm.RoleTool:
			// A function_call_output holds text: anything else a tool returned (an image)
			// follows the outputs in a user message.
			results, rest := llm.SplitToolResults(m.Parts)
			for _, p := range results {
				out = append(out, callOutput{Type: "function_call_output", CallID: p.CallID, Output: p.Text})
			}
			if len(rest) > 0 {
				out = append(out, userMessage{Role: "user", Content: userContent(rest)})
			}
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// userContent is a plain string for one text part, else input content parts.
func userContent(parts []llm.Part) any {
	return llm.UserContent(parts, func(p *llm.Part) inputPart {
		if p.Kind == llm.KindImage {
			return inputPart{Type: "input_image", ImageURL: p.ImageURL, Detail: "auto"}
		}
		return inputPart{Type: "input_text", Text: p.Text}
	})
}

// assistantItems turns an assistant message into output items, one per part, in order. A
// reasoning item goes back byte for byte when this dialect produced it, and only when an item
// follows it in the message: the API refuses a reasoning item without its following item.
// Reasoning from another dialect is dropped; its text is not this model's to continue.
func assistantItems(parts []llm.Part) ([]any, error) {
	var out []any
	for i, p := range parts {
		own := p.Dialect == Name
		var m meta
		if own && len(p.Meta) > 0 {
			if err := json.Unmarshal(p.Meta, &m); err != nil {
				return nil, fmt.Errorf("part %d: meta: %w", i, err)
			}
		}
		switch p.Kind {
		case llm.KindReasoning:
			// Only an item goes back: a part stored by an older decoder may hold null.
			if own && isObject(p.Raw) && followed(parts[i+1:]) {
				out = append(out, p.Raw)
			}
		case llm.KindText:
			if m.ID == "" {
				out = append(out, plainAssistant{Type: "message", Role: "assistant", Content: p.Text, Phase: m.Phase})
				continue
			}
			out = append(out, outputMessage{
				Type: "message", ID: m.ID, Role: "assistant", Status: "completed", Phase: m.Phase,
				Content: []outputText{{Type: "output_text", Text: p.Text, Annotations: []struct{}{}}},
			})
		case llm.KindToolCall:
			out = append(out, functionCall{Type: "function_call", ID: m.ID, CallID: p.CallID, Name: p.Name, Arguments: llm.ArgsText(p.Args)})
		}
	}
	return out, nil
}

// followed reports whether parts hold an item a reasoning item can precede.
func followed(parts []llm.Part) bool {
	for _, p := range parts {
		if p.Kind == llm.KindText || p.Kind == llm.KindToolCall {
			return true
		}
	}
	return false
}
