// Package ollama is Ollama's native chat dialect (`api: "ollama"`): it encodes an llm.Request
// for POST /api/chat and decodes its NDJSON stream or single JSON answer.
package ollama

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// Name is the config's `api` value for this dialect, and the Dialect stamped on the reasoning
// parts it produces.
const Name = "ollama"

type dialect struct{}

var _ llm.Dialect = dialect{}

// New returns the Ollama dialect. It is stateless and safe for concurrent use.
func New() llm.Dialect { return dialect{} }

func (dialect) Name() string { return Name }

// emptySchema is the parameters of a tool that declares none: Ollama's template code expects
// an object schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Encode builds an /api/chat request. The thinking level arrives in the patch body (`think`:
// true, false or "low"/"medium"/"high"); Ollama has no fast mode and no tool_choice, so
// ToolChoice "none" sends no tools and "required" cannot be expressed.
func (dialect) Encode(req *llm.Request, p llm.Patch) (*llm.Encoded, error) {
	body := chatRequest{Model: req.Model, Stream: req.Stream}
	if p.Model != "" {
		body.Model = p.Model
	}
	if body.Model == "" {
		return nil, errors.New("ollama: request has no model")
	}
	msgs, err := encodeMessages(req)
	if err != nil {
		return nil, err
	}
	body.Messages = msgs
	if req.ToolChoice != "none" {
		for _, t := range req.Tools {
			params := json.RawMessage(bytes.TrimSpace(t.Parameters))
			if len(params) == 0 || string(params) == "null" {
				params = emptySchema
			}
			body.Tools = append(body.Tools, tool{Type: "function", Function: toolFunction{Name: t.Name, Description: t.Description, Parameters: params}})
		}
	}
	var opts json.RawMessage
	if req.MaxTokens > 0 || req.Temperature != nil {
		if opts, err = llm.Marshal(&options{NumPredict: req.MaxTokens, Temperature: req.Temperature}); err != nil {
			return nil, fmt.Errorf("ollama: %w", err)
		}
	}
	extra, opts, err := llm.PassThrough(req.Extra, owned[:], "options", opts)
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	body.Options = opts
	b, err := llm.Marshal(&body)
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	if b, err = llm.AddMissing(b, extra); err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	if b, err = llm.MergePatch(b, p.Body); err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	p.SetHeaders(h)
	return &llm.Encoded{Path: "/api/chat", Header: h, Body: b}, nil
}

// owned are the fields Encode decides even when it leaves them out: an Extra `stream` on a
// request nodmix reads as one document, or `tools` beside the run's own, would break the call.
// Extra's options (num_ctx, top_k, …) are sent with nodmix's own members over them.
var owned = [...]string{"model", "messages", "tools", "stream"}

// encodeMessages turns the transcript into Ollama messages: the system prompt first, one
// message per user or assistant turn, and one role:"tool" message per tool result.
func encodeMessages(req *llm.Request) ([]message, error) {
	out := make([]message, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, message{Role: "system", Content: req.System})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		var err error
		switch m.Role {
		case llm.RoleAssistant:
			out = append(out, assistantMessage(m))
		case llm.RoleUser, llm.RoleTool:
			out, err = appendUser(out, req.Messages, i)
		default:
			err = fmt.Errorf("unknown role %q", m.Role)
		}
		if err != nil {
			return nil, fmt.Errorf("ollama: message %d: %w", i, err)
		}
	}
	return out, nil
}

// assistantMessage is an assistant turn: its text, the thinking Ollama produced (another
// provider's reasoning is not Ollama's to replay), and its calls with object arguments.
func assistantMessage(m *llm.Message) message {
	var content, thinking strings.Builder
	out := message{Role: "assistant"}
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case llm.KindText:
			content.WriteString(p.Text)
		case llm.KindReasoning:
			if p.Dialect == Name {
				thinking.WriteString(p.Text)
			}
		case llm.KindToolCall:
			out.ToolCalls = append(out.ToolCalls, toolCall{ID: p.CallID, Function: callFunction{Name: p.Name, Arguments: llm.ObjectArgs(p.Args)}})
		}
	}
	out.Content, out.Thinking = content.String(), thinking.String()
	return out
}

// appendUser appends a user or tool message: tool results become role:"tool" messages in
// order, and the text and images around them one role:"user" message.
func appendUser(out []message, msgs []llm.Message, at int) ([]message, error) {
	m := &msgs[at]
	var texts []string
	var images []string
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case llm.KindText:
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		case llm.KindImage:
			data, err := imageData(p.ImageURL)
			if err != nil {
				return nil, err
			}
			images = append(images, data)
		case llm.KindToolResult:
			name := p.Name
			if name == "" {
				name = callName(msgs, at, p.CallID)
			}
			out = append(out, message{Role: "tool", Content: p.Text, ToolName: name, ToolCallID: p.CallID})
		}
	}
	if len(texts) > 0 || len(images) > 0 {
		out = append(out, message{Role: "user", Content: strings.Join(texts, "\n\n"), Images: images})
	}
	return out, nil
}

// callName is the name of the call a result answers, from the nearest assistant message
// before it.
func callName(msgs []llm.Message, before int, callID string) string {
	for i := before - 1; i >= 0; i-- {
		if msgs[i].Role != llm.RoleAssistant {
			continue
		}
		for j := range msgs[i].Parts {
			if p := &msgs[i].Parts[j]; p.Kind == llm.KindToolCall && p.CallID == callID {
				return p.Name
			}
		}
	}
	return ""
}

// imageData is an image as Ollama takes it: base64 bytes. Ollama fetches nothing itself, so
// only data URLs can be sent.
func imageData(u string) (string, error) {
	if !strings.HasPrefix(u, "data:") {
		return "", errors.New("image is a URL: Ollama takes inline images only (data: URLs)")
	}
	_, data, err := llm.DataURL(u)
	if err != nil {
		return "", fmt.Errorf("image %w", err)
	}
	return data, nil
}
