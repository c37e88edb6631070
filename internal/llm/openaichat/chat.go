// Package openaichat speaks OpenAI's Chat Completions wire format (`api: "openai-completions"`),
// which OpenAI and most OpenAI-compatible providers serve at POST /chat/completions.
package openaichat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// Name is the config's `api` value of this dialect.
const Name = "openai-completions"

// Quirks are how an OpenAI-compatible provider departs from OpenAI's own Chat Completions API.
// The zero value is OpenAI. They are plain data: the provider table sets them per provider.
type Quirks struct {
	// MaxTokensField names the output token cap: "max_completion_tokens" (OpenAI; the default
	// when empty) or "max_tokens" (DeepSeek, Moonshot, Z.AI, OpenRouter and most servers).
	MaxTokensField string
	// SystemRole is the role of the system prompt's message: "system" (the default when empty)
	// or "developer".
	SystemRole string
	// ReasoningContent sends reasoning back as `reasoning_content` on the assistant messages that
	// carry tool calls, and (but for ReasoningKept) only there: DeepSeek and Moonshot refuse a
	// thinking model's tool loop without it, Z.AI's interleaved thinking wants it back with the
	// tool results, and DeepSeek wants it left off other turns.
	ReasoningContent bool
	// ReasoningRequired, with ReasoningContent, makes every tool-call message carry
	// reasoning_content while the body leaves thinking on (its thinking.type is not
	// "disabled"), ReasoningPlaceholder when it has no reasoning to send back: a turn may have
	// none (it ran with thinking off, or the model called at once), and DeepSeek and Moonshot
	// answer 400 for a tool-call message without the field in thinking mode. Moonshot reads ""
	// as missing, so it takes " ".
	ReasoningRequired    bool
	ReasoningPlaceholder string
	// ReasoningEvery extends ReasoningRequired to every assistant message: DeepSeek wants the
	// reasoning of every assistant message between two user messages that hold a tool call,
	// the answer's too, and ignores it elsewhere.
	ReasoningEvery bool
	// ReasoningKept, with ReasoningContent, also sends the reasoning_content this dialect kept
	// on assistant messages without tool calls. Z.AI's Preserved Thinking (thinking.clear_thinking
	// false, and the Coding Plan endpoint's default) wants the complete, unmodified reasoning of
	// earlier turns back; with clear_thinking true the server drops it, so sending it always
	// needs no reading of the endpoint or the body. Reasoning another dialect produced is not
	// the model's own sequence and stays off those messages.
	ReasoningKept bool
	// ReasoningDetails keeps OpenRouter's `reasoning_details` array in the reasoning part's Raw
	// and sends it back unchanged on assistant messages, which is how OpenRouter carries signed
	// and encrypted reasoning across a tool loop. MiniMax sends the same array when asked for
	// reasoning_split.
	ReasoningDetails bool
	// DetailsCumulative, with ReasoningDetails, reads a streamed detail's text that begins
	// with all the text of that detail so far as the whole text so far, not a further piece:
	// MiniMax's own streaming example prints text[len(seen):] of each piece. Any other piece
	// is appended as OpenRouter's are, so either form merges into the same array.
	DetailsCumulative bool
	// AutoToolChoiceWhenThinking turns a tool_choice other than "auto" or "none" into "auto"
	// when the final body leaves thinking on (it has no `thinking.type` of "disabled"): Moonshot
	// refuses a forced tool choice while thinking.
	AutoToolChoiceWhenThinking bool
	// ToolStream adds `"tool_stream": true` to streaming requests that carry tools: Z.AI
	// streams tool call arguments only when asked.
	ToolStream bool
	// NoStreamUsage leaves out `stream_options: {"include_usage": true}`, for servers that
	// refuse it. Such a stream reports no usage unless the server sends it anyway.
	NoStreamUsage bool
}

type dialect struct{ q Quirks }

var _ llm.Dialect = (*dialect)(nil)

// New returns the Chat Completions dialect with q applied. It is stateless and safe for
// concurrent use.
func New(q Quirks) llm.Dialect { return &dialect{q: q} }

func (*dialect) Name() string { return Name }

// Encode builds POST /chat/completions. See llm.Dialect.
func (d *dialect) Encode(req *llm.Request, p llm.Patch) (*llm.Encoded, error) {
	body := request{
		Model:       req.Model,
		Temperature: req.Temperature,
	}
	if p.Model != "" {
		body.Model = p.Model
	}
	switch d.q.MaxTokensField {
	case "", "max_completion_tokens":
		body.MaxCompletionTokens = req.MaxTokens
	case "max_tokens":
		body.MaxTokens = req.MaxTokens
	default:
		return nil, fmt.Errorf("encode: quirk MaxTokensField %q: want max_completion_tokens or max_tokens", d.q.MaxTokensField)
	}
	switch req.ToolChoice {
	case "", "auto", "none", "required":
		body.ToolChoice = req.ToolChoice
	default:
		return nil, fmt.Errorf("encode: tool choice %q: want auto, none or required", req.ToolChoice)
	}
	msgs, err := d.messages(req, d.q.ReasoningRequired && !thinkingOff(req.Extra, p.Body))
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	body.Messages = msgs
	if len(req.Tools) > 0 {
		body.Tools = make([]tool, len(req.Tools))
		for i, t := range req.Tools {
			body.Tools[i] = tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: t.Parameters}}
		}
	}
	if req.Stream {
		body.Stream = true
		if !d.q.NoStreamUsage {
			body.StreamOptions = &streamOptions{IncludeUsage: true}
		}
		body.ToolStream = d.q.ToolStream && len(req.Tools) > 0
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
	if d.q.AutoToolChoiceWhenThinking {
		if b, err = autoToolChoice(b); err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if req.Stream {
		h.Set("Accept", "text/event-stream")
	}
	p.SetHeaders(h)
	return &llm.Encoded{Path: "/chat/completions", Header: h, Body: b}, nil
}

// owned are the fields Encode decides even when it leaves them out: an Extra `stream` on a
// request nodmix reads as one document, `tools` beside (or instead of) the run's own, or the
// token cap under the name this provider does not take would break the call. tool_choice is
// not among them: a named function is only expressible through Extra.
var owned = [...]string{"model", "messages", "tools", "max_tokens", "max_completion_tokens", "temperature", "stream", "stream_options", "tool_stream"}

// autoToolChoice applies Quirks.AutoToolChoiceWhenThinking to the final body.
func autoToolChoice(b []byte) ([]byte, error) {
	if !bytes.Contains(b, []byte(`"tool_choice"`)) {
		return b, nil
	}
	var v struct {
		ToolChoice json.RawMessage `json:"tool_choice"`
		Thinking   struct {
			Type string `json:"type"`
		} `json:"thinking"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	switch string(v.ToolChoice) {
	case "", "null", `"auto"`, `"none"`:
		return b, nil
	}
	if v.Thinking.Type == "disabled" {
		return b, nil
	}
	return llm.MergePatch(b, []byte(`{"tool_choice":"auto"}`))
}

// thinkingOff reports whether the body that Extra and the patch make has thinking.type
// "disabled". Bodies it cannot read count as thinking on: a needless reasoning_content is
// ignored, a missing one refused.
func thinkingOff(extra map[string]json.RawMessage, patch json.RawMessage) bool {
	th := extra["thinking"]
	if len(patch) > 0 {
		var v struct {
			Thinking json.RawMessage `json:"thinking"`
		}
		if json.Unmarshal(patch, &v) == nil && v.Thinking != nil {
			merged, err := llm.MergePatch(th, v.Thinking)
			if err != nil {
				return false
			}
			th = merged
		}
	}
	var t struct {
		Type string `json:"type"`
	}
	return len(th) > 0 && json.Unmarshal(th, &t) == nil && t.Type == "disabled"
}

// messages builds the wire messages; fill applies Quirks.ReasoningRequired.
func (d *dialect) messages(req *llm.Request, fill bool) ([]message, error) {
	out := make([]message, 0, len(req.Messages)+1)
	if req.System != "" {
		role := d.q.SystemRole
		if role == "" {
			role = "system"
		}
		out = append(out, message{Role: role, Content: req.System})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case llm.RoleUser:
			out = append(out, message{Role: "user", Content: userContent(m.Parts)})
		case llm.RoleAssistant:
			msg, err := d.assistant(m, fill)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			out = append(out, msg)
		case llm.RoleTool:
			// The tool role takes text only: anything else a tool returned (an image) follows
			// the results in a user message.
			results, rest := llm.SplitToolResults(m.Parts)
			for _, p := range results {
				out = append(out, message{Role: "tool", ToolCallID: p.CallID, Content: p.Text})
			}
			if len(rest) > 0 {
				out = append(out, message{Role: "user", Content: userContent(rest)})
			}
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// userContent is a plain string for one text part, else content parts.
func userContent(parts []llm.Part) any {
	return llm.UserContent(parts, func(p *llm.Part) contentPart {
		if p.Kind == llm.KindImage {
			return contentPart{Type: "image_url", ImageURL: &imageURL{URL: p.ImageURL}}
		}
		return contentPart{Type: "text", Text: p.Text}
	})
}

func (d *dialect) assistant(m *llm.Message, fill bool) (message, error) {
	msg := message{Role: "assistant"}
	var ownContent string
	var otherText strings.Builder // a history's messages may hold many parts: no quadratic +=
	for _, p := range m.Parts {
		switch p.Kind {
		case llm.KindText:
		case llm.KindToolCall:
			msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: p.CallID, Type: "function", Function: callFunction{Name: p.Name, Arguments: llm.ArgsText(p.Args)}})
		case llm.KindReasoning:
			own := p.Dialect == Name && len(p.Raw) > 0
			switch {
			case own && p.Raw[0] == '[':
				if d.q.ReasoningDetails {
					msg.ReasoningDetails = p.Raw
				}
			case own && p.Raw[0] == '"':
				ownContent = string(p.Raw)
			case !own && p.Text != "":
				otherText.WriteString(p.Text)
			}
		}
	}
	if d.q.ReasoningContent && (len(msg.ToolCalls) > 0 || fill && d.q.ReasoningEvery || d.q.ReasoningKept && ownContent != "") {
		// Reasoning another dialect produced is sent as its text: a thinking provider refuses
		// a tool-call turn without reasoning_content, so after a model switch its shown text
		// is better than nothing.
		switch {
		case ownContent != "":
			msg.ReasoningContent = json.RawMessage(ownContent)
		case otherText.Len() > 0:
			raw, err := json.Marshal(otherText.String())
			if err != nil {
				return msg, err
			}
			msg.ReasoningContent = raw
		case fill:
			raw, err := json.Marshal(d.q.ReasoningPlaceholder)
			if err != nil {
				return msg, err
			}
			msg.ReasoningContent = raw
		}
	}
	if text := m.Text(); text != "" || len(msg.ToolCalls) == 0 {
		msg.Content = text
	}
	return msg, nil
}
