// Package llm is nodmix's one model of a conversation with a language model — Request, Message,
// Part, Event — and the Dialect interface that each provider wire format implements on it.
package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
)

// Role is who speaks a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries tool results back to the model. Dialects that put results in a user
	// message (Anthropic, Gemini) convert.
	RoleTool Role = "tool"
)

// Kind is what a Part holds.
type Kind string

const (
	KindText       Kind = "text"
	KindImage      Kind = "image"
	KindToolCall   Kind = "tool_call"
	KindToolResult Kind = "tool_result"
	// KindReasoning is the model's reasoning. Text is what may be shown to a person (a summary or
	// the plain reasoning); Raw is the provider's own bytes, sent back unchanged on the next step
	// by the dialect that produced it (Anthropic thinking blocks with their signature, DeepSeek
	// reasoning_content, OpenRouter reasoning_details, Responses reasoning items).
	KindReasoning Kind = "reasoning"
)

// Part is one piece of a message. Which fields are set depends on Kind; the JSON form is what
// the session store keeps, so field names are stable.
type Part struct {
	Kind Kind   `json:"kind"`
	Text string `json:"text,omitempty"` // text, reasoning text, tool result text

	// Image: a data URL or an https URL, as the client sent it.
	ImageURL string `json:"image_url,omitempty"`

	// Tool call and tool result: CallID pairs a result with its call.
	CallID string          `json:"call_id,omitempty"`
	Name   string          `json:"name,omitempty"` // model-facing tool name
	Args   json.RawMessage `json:"args,omitempty"` // tool call arguments, a JSON object as the model sent it
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"is_error,omitempty"`

	// Dialect names the Dialect that produced Raw and Meta. A dialect sends back only what it
	// produced itself: after a model switch, another provider's opaque bytes are dropped.
	Dialect string `json:"dialect,omitempty"`
	// Provider names the provider id that produced Raw and Meta. Providers share dialects
	// (Anthropic and MiniMax speak one), and a signed reasoning block is only valid at the
	// provider that signed it: the turn loop drops Raw and Meta of another provider's parts.
	Provider string `json:"provider,omitempty"`
	// Raw is an opaque provider item kept byte-for-byte (a reasoning block or item).
	Raw json.RawMessage `json:"raw,omitempty"`
	// Meta is opaque provider data attached to a part of another kind (Gemini's
	// thoughtSignature on a function call, a Responses item id), sent back with it.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// Message is one turn of the transcript.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// Text returns the concatenated text parts of m. It copies once, whatever the number of parts: a
// client's message may hold a million of them.
func (m *Message) Text() string {
	n, texts, only := 0, 0, ""
	for _, p := range m.Parts {
		if p.Kind == KindText && p.Text != "" {
			n, texts, only = n+len(p.Text), texts+1, p.Text
		}
	}
	if texts <= 1 {
		return only
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range m.Parts {
		if p.Kind == KindText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the tool call parts of m, in order.
func (m *Message) ToolCalls() []Part {
	var out []Part
	for _, p := range m.Parts {
		if p.Kind == KindToolCall {
			out = append(out, p)
		}
	}
	return out
}

// Tool is a tool definition as the model receives it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema object
}

// Request is one model call: the whole transcript so far, the tools the run exposes, and the
// generation settings. Dialects read it and never modify it.
type Request struct {
	Model    string    // the provider's model id (after any rename), not a nodmix ref
	System   string    // system prompt; "" for none
	Messages []Message // oldest first
	Tools    []Tool
	// ToolChoice is "", "auto", "none" or "required"; "" leaves the provider default.
	ToolChoice  string
	MaxTokens   int      // 0: provider default (dialects that require one use the model's maxTokens)
	Temperature *float64 // nil: provider default
	Stream      bool
	// Extra holds top-level request fields nodmix does not model (a gateway client's `seed`,
	// `logit_bias`, …). Dialects of the same wire family copy them into the body unchanged;
	// fields nodmix sets itself win.
	Extra map[string]json.RawMessage
}

// Usage is what one model call cost, in tokens. Zero means not reported.
type Usage struct {
	InputTokens     int `json:"input_tokens"`
	OutputTokens    int `json:"output_tokens"`
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	CacheReadTokens int `json:"cache_read_tokens,omitempty"`
	TotalTokens     int `json:"total_tokens,omitempty"`
}

// EventKind is what an Event reports.
type EventKind string

const (
	// EventText is a piece of visible answer text (Text).
	EventText EventKind = "text"
	// EventReasoning is a piece of reasoning text (Text), for `/reasoning on`.
	EventReasoning EventKind = "reasoning"
	// EventToolCall announces a tool call as soon as its name is known (Index, CallID, Name).
	EventToolCall EventKind = "tool_call"
	// EventToolArgs is a piece of a tool call's arguments (Index, Text).
	EventToolArgs EventKind = "tool_args"
	// EventDone ends a successful response. Message is the whole assistant message, assembled
	// by the dialect (text, reasoning parts with Raw, tool calls with complete Args, in the
	// order the provider sent them); Usage and Finish are set when the provider reported them.
	EventDone EventKind = "done"
)

// Event is one step of a decoded response. A stream of events always ends with EventDone or an
// error; deltas are for showing progress, EventDone's Message is the truth.
type Event struct {
	Kind    EventKind
	Text    string
	Index   int // tool call position within the response, from 0
	CallID  string
	Name    string
	Message *Message
	Usage   *Usage
	// Finish is why the model stopped: "stop", "tool_calls", "length", "content_filter", or
	// the provider's own word.
	Finish string
}

// Patch is what a thinking level and fast mode add to one request (DESIGN §12): a JSON merge
// patch (RFC 7396) over the encoded body, headers, and a model rename. The zero Patch changes
// nothing.
type Patch struct {
	Body   json.RawMessage // a JSON object; null members delete keys
	Header http.Header
	Model  string // non-empty: send this model id instead
}

// Encoded is a request ready to send, without the provider's base URL and credentials.
type Encoded struct {
	Path   string      // appended to the base URL: "/chat/completions", "/models/x:generateContent"
	Header http.Header // the dialect's own headers (content type, version headers, patch headers)
	Body   []byte
}

// Dialect is one provider wire format. Implementations are stateless and safe for concurrent use.
type Dialect interface {
	// Name is the config's `api` value ("openai-completions", "anthropic-messages", …).
	Name() string
	// Encode builds the request body and headers for req, with p applied (model rename first,
	// then the body merge patch, then headers). It never modifies req.
	Encode(req *Request, p Patch) (*Encoded, error)
	// Decode reads a response body: a stream when stream is true (SSE or NDJSON, as the dialect
	// speaks), else one JSON document. The sequence ends after EventDone, or with an error;
	// a stream that ends without its terminal event yields ErrTruncated. Callers must stop
	// ranging after the first error. r is read only while the sequence is being ranged over.
	Decode(r io.Reader, stream bool) iter.Seq2[Event, error]
}

// Sentinel errors of decoding.
var (
	// ErrTruncated: the response ended before the provider's terminal event or document end.
	ErrTruncated = errors.New("response ended before it was complete")
	// ErrLineTooLong: a stream line exceeded the reader's cap.
	ErrLineTooLong = errors.New("stream line too long")
)

// StreamError is an error the provider reported inside a successful HTTP response (an SSE
// `error` event, an NDJSON `{"error": …}` line).
type StreamError struct {
	Type    string // the provider's error type or code, when it gave one
	Message string
	// Status is the HTTP status the provider's code stands for, when the dialect knows one
	// (MiniMax reports a rate limit or a bad key as a code inside a 200); 0 when it does not.
	// It gives the error the same hint and gateway status as the HTTP error would have.
	Status int
}

func (e *StreamError) Error() string {
	if e.Type != "" {
		return fmt.Sprintf("provider error (%s): %s", e.Type, e.Message)
	}
	return "provider error: " + e.Message
}
