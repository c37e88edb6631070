package anthropic

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// merge takes the counts u reports. message_delta's usage is cumulative and may repeat or omit
// what message_start said, so only fields it reports (non-zero) replace earlier ones.
func (w *wireUsage) merge(u *wireUsage) {
	if u.InputTokens != 0 {
		w.InputTokens = u.InputTokens
	}
	if u.OutputTokens != 0 {
		w.OutputTokens = u.OutputTokens
	}
	if u.CacheReadInputTokens != 0 {
		w.CacheReadInputTokens = u.CacheReadInputTokens
	}
	if u.CacheCreationInputTokens != 0 {
		w.CacheCreationInputTokens = u.CacheCreationInputTokens
	}
}

// usage maps the counts. Anthropic's input_tokens leaves out the cached prefix (read or written),
// so InputTokens adds both back: it is the whole prompt, as on every other dialect, and
// CacheReadTokens is the part of it served from cache.
func (w *wireUsage) usage() *llm.Usage {
	return &llm.Usage{
		InputTokens:     w.InputTokens + w.CacheReadInputTokens + w.CacheCreationInputTokens,
		OutputTokens:    w.OutputTokens,
		CacheReadTokens: w.CacheReadInputTokens,
	}
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (e *wireError) err() *llm.StreamError {
	if e == nil {
		return &llm.StreamError{Message: "error without details"}
	}
	return &llm.StreamError{Type: e.Type, Message: e.Message}
}

// wireBlockIn is a content block of a response or a content_block_start event.
type wireBlockIn struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type wireResponse struct {
	Type       string            `json:"type"`
	Content    []json.RawMessage `json:"content"`
	StopReason string            `json:"stop_reason"`
	Usage      *wireUsage        `json:"usage"`
	Error      *wireError        `json:"error"`
}

// wireEvent is every SSE event's data in one shape; each event type fills its own fields.
type wireEvent struct {
	Type         string       `json:"type"`
	Index        int          `json:"index"`
	Message      *wireStart   `json:"message"`
	ContentBlock *wireBlockIn `json:"content_block"`
	Delta        *wireDelta   `json:"delta"`
	Usage        *wireUsage   `json:"usage"`
	Error        *wireError   `json:"error"`
}

// reset clears e for the next event. Delta and ContentBlock keep their structs, zeroed, for
// Unmarshal to fill again, so an event without them reads as carrying empty ones; the handlers
// treat empty as nothing.
func (e *wireEvent) reset() {
	d, cb := e.Delta, e.ContentBlock
	*e = wireEvent{}
	if d != nil {
		*d = wireDelta{}
		e.Delta = d
	}
	if cb != nil {
		*cb = wireBlockIn{}
		e.ContentBlock = cb
	}
}

type wireStart struct {
	Usage *wireUsage `json:"usage"`
}

// wireDelta is a content_block_delta's or a message_delta's delta.
type wireDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
	// ReasoningContent is not Anthropic's: MiniMax's M2 models have been seen to stream their
	// reasoning this way on the compatible endpoint. It is shown as reasoning, never as text.
	ReasoningContent string `json:"reasoning_content"`
}

// Decode reads a Messages response: an SSE stream when stream is true, else one JSON message.
func (d *dialect) Decode(r io.Reader, stream bool) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if stream {
			decodeStream(r, yield)
			return
		}
		ev, err := decodeDocument(r)
		yield(ev, err)
	}
}

func decodeDocument(r io.Reader) (llm.Event, error) {
	var w wireResponse
	b, err := llm.ReadDocument(r, &w, false)
	if err != nil {
		if e := llm.ErrorDocument(b); e != nil && !errors.Is(err, llm.ErrTruncated) {
			return llm.Event{}, e // an error member of another shape
		}
		return llm.Event{}, fmt.Errorf("anthropic: %w", err)
	}
	if w.Type == "error" || w.Error != nil {
		se := w.Error.err()
		if e := llm.ErrorDocument(b); se.Message == "" && e != nil {
			se.Message = e.Message
		}
		return llm.Event{}, se
	}
	if w.Type == "" && w.Content == nil {
		return llm.Event{}, errors.New("anthropic: decode response: not a message (no type, no content)")
	}
	msg := &llm.Message{Role: llm.RoleAssistant, Parts: make([]llm.Part, 0, len(w.Content))}
	for i, raw := range w.Content {
		var b wireBlockIn
		if err := json.Unmarshal(raw, &b); err != nil {
			return llm.Event{}, fmt.Errorf("anthropic: response content %d: %w", i, err)
		}
		switch b.Type {
		case "text":
			if b.Text != "" {
				msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindText, Text: b.Text})
			}
		case "thinking", "redacted_thinking":
			// Kept as received (compacted), to go back byte for byte.
			var c bytes.Buffer
			c.Grow(len(raw))
			_ = json.Compact(&c, raw) // raw was just parsed, so it is valid JSON
			msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindReasoning, Text: b.Thinking, Dialect: Name, Raw: c.Bytes()})
		case "tool_use":
			msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindToolCall, CallID: b.ID, Name: b.Name, Args: args(b.Input)})
		}
	}
	ev := llm.Event{Kind: llm.EventDone, Message: msg, Finish: finish(w.StopReason)}
	if w.Usage != nil {
		ev.Usage = w.Usage.usage()
	}
	return ev, nil
}

// finish maps stop_reason to the canonical words.
func finish(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return stop
}

// args is a tool call's complete input as Args: an empty or null input is {}; input that is not JSON (a
// response cut inside a tool call) is kept as a JSON string, so Args is always JSON and the
// loop can report the call as malformed.
func args(in []byte) json.RawMessage {
	t := bytes.TrimSpace(in)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage(`{}`)
	}
	if json.Valid(t) {
		return slices.Clip(t)
	}
	s, _ := json.Marshal(string(t))
	return s
}

// block is one content block being assembled from a stream.
type block struct {
	index int
	typ   string // text, thinking, redacted_thinking, tool_use, or a type nodmix skips
	text  strings.Builder
	sig   strings.Builder
	data  string
	id    string
	name  string
	args  []byte
	start json.RawMessage // tool_use input given at content_block_start
	call  int             // tool call position, for tool_use
	// reasoning collects reasoning_content deltas (see wireDelta).
	reasoning strings.Builder
}

type streamState struct {
	blocks   []*block
	byIndex  map[int]*block // the last block started with each index
	calls    int
	usage    wireUsage
	hasUsage bool
	stop     string
}

// find returns the last block started with index i: by a map, since a stream may interleave
// the deltas of many blocks (a search through them per delta would be quadratic).
func (s *streamState) find(i int) *block { return s.byIndex[i] }

func (s *streamState) add(i int, typ string) *block {
	b := &block{index: i, typ: typ}
	if typ == "tool_use" {
		b.call = s.calls
		s.calls++
	}
	s.blocks = append(s.blocks, b)
	if s.byIndex == nil {
		s.byIndex = make(map[int]*block, 4)
	}
	s.byIndex[i] = b
	return b
}

// decodeStream turns the SSE events into canonical events and ends with EventDone at
// message_stop, or with an error.
func decodeStream(r io.Reader, yield func(llm.Event, error) bool) {
	var st streamState
	// One event value serves the whole stream: unmarshalling into it anew allocates less than
	// a fresh one per event.
	var e wireEvent
	for sse, err := range llm.ReadSSE(r, 0) {
		if err != nil {
			yield(llm.Event{}, fmt.Errorf("anthropic: stream: %w", err))
			return
		}
		if sse.Done() || len(bytes.TrimSpace(sse.Data)) == 0 {
			continue
		}
		e.reset()
		if err := json.Unmarshal(sse.Data, &e); err != nil {
			yield(llm.Event{}, fmt.Errorf("anthropic: stream event %q: %w", sse.Event, err))
			return
		}
		typ := e.Type
		if typ == "" {
			typ = sse.Event
		}
		switch typ {
		case "message_start":
			if e.Message != nil && e.Message.Usage != nil {
				st.usage.merge(e.Message.Usage)
				st.hasUsage = true
			}
		case "content_block_start":
			if e.ContentBlock != nil && e.ContentBlock.Type != "" && !st.start(e.Index, e.ContentBlock, yield) {
				return
			}
		case "content_block_delta":
			if e.Delta != nil && !st.delta(e.Index, e.Delta, yield) {
				return
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				st.stop = e.Delta.StopReason
			}
			if e.Usage != nil {
				st.usage.merge(e.Usage)
				st.hasUsage = true
			}
		case "message_stop":
			yield(st.done(), nil)
			return
		case "error":
			yield(llm.Event{}, e.Error.err())
			return
		}
		// ping, content_block_stop and event types added later carry nothing to assemble.
	}
	yield(llm.Event{}, fmt.Errorf("anthropic: stream ended before message_stop: %w", llm.ErrTruncated))
}

func (s *streamState) start(i int, cb *wireBlockIn, yield func(llm.Event, error) bool) bool {
	b := s.add(i, cb.Type)
	switch cb.Type {
	case "text":
		// Anthropic starts blocks empty; compatible endpoints may not.
		if cb.Text != "" {
			b.text.WriteString(cb.Text)
			return yield(llm.Event{Kind: llm.EventText, Text: cb.Text}, nil)
		}
	case "thinking":
		b.sig.WriteString(cb.Signature)
		if cb.Thinking != "" {
			b.text.WriteString(cb.Thinking)
			return yield(llm.Event{Kind: llm.EventReasoning, Text: cb.Thinking}, nil)
		}
	case "redacted_thinking":
		b.data = cb.Data
	case "tool_use":
		b.id, b.name = cb.ID, cb.Name
		if t := bytes.TrimSpace(cb.Input); len(t) > 0 && string(t) != "{}" && string(t) != "null" {
			b.start = slices.Clone(t)
		}
		return yield(llm.Event{Kind: llm.EventToolCall, Index: b.call, CallID: b.id, Name: b.name}, nil)
	}
	return true
}

func (s *streamState) delta(i int, dl *wireDelta, yield func(llm.Event, error) bool) bool {
	b := s.find(i)
	if b == nil {
		// A delta for a block never started: text and thinking can still be kept.
		switch dl.Type {
		case "text_delta":
			b = s.add(i, "text")
		case "thinking_delta", "signature_delta":
			b = s.add(i, "thinking")
		default:
			if dl.ReasoningContent == "" {
				return true
			}
			b = s.add(i, "")
		}
	}
	if dl.ReasoningContent != "" {
		b.reasoning.WriteString(dl.ReasoningContent)
		if !yield(llm.Event{Kind: llm.EventReasoning, Text: dl.ReasoningContent}, nil) {
			return false
		}
	}
	switch dl.Type {
	case "text_delta":
		if b.typ == "text" && dl.Text != "" {
			b.text.WriteString(dl.Text)
			return yield(llm.Event{Kind: llm.EventText, Text: dl.Text}, nil)
		}
	case "thinking_delta":
		if b.typ == "thinking" && dl.Thinking != "" {
			b.text.WriteString(dl.Thinking)
			return yield(llm.Event{Kind: llm.EventReasoning, Text: dl.Thinking}, nil)
		}
	case "signature_delta":
		if b.typ == "thinking" {
			b.sig.WriteString(dl.Signature)
		}
	case "input_json_delta":
		if b.typ == "tool_use" && dl.PartialJSON != "" {
			b.args = append(b.args, dl.PartialJSON...)
			return yield(llm.Event{Kind: llm.EventToolArgs, Index: b.call, Text: dl.PartialJSON}, nil)
		}
	}
	return true
}

// thinkingBlock and redactedBlock are the blocks a stream's thinking is sent back as.
type thinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type redactedBlock struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

// done assembles the message in block index order.
func (s *streamState) done() llm.Event {
	slices.SortStableFunc(s.blocks, func(a, b *block) int { return cmp.Compare(a.index, b.index) })
	msg := &llm.Message{Role: llm.RoleAssistant, Parts: make([]llm.Part, 0, len(s.blocks))}
	for _, b := range s.blocks {
		if b.reasoning.Len() > 0 {
			// No block to send back: shown, kept in the transcript, never replayed.
			msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindReasoning, Text: b.reasoning.String(), Dialect: Name})
		}
		switch b.typ {
		case "text":
			if b.text.Len() > 0 {
				msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindText, Text: b.text.String()})
			}
		case "thinking":
			text := b.text.String()
			raw, _ := llm.Marshal(thinkingBlock{Type: "thinking", Thinking: text, Signature: b.sig.String()})
			msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindReasoning, Text: text, Dialect: Name, Raw: raw})
		case "redacted_thinking":
			raw, _ := llm.Marshal(redactedBlock{Type: "redacted_thinking", Data: b.data})
			msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindReasoning, Dialect: Name, Raw: raw})
		case "tool_use":
			in := b.args
			if len(bytes.TrimSpace(in)) == 0 {
				in = b.start
			}
			msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindToolCall, CallID: b.id, Name: b.name, Args: args(in)})
		}
	}
	ev := llm.Event{Kind: llm.EventDone, Message: msg, Finish: finish(s.stop)}
	if s.hasUsage {
		ev.Usage = s.usage.usage()
	}
	return ev
}
