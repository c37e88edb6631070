package openairesp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// Decode reads a Response object, or a stream of events ending in response.completed (or
// response.incomplete, which ends with Finish "length"). response.failed and `error` events
// are *llm.StreamError; a stream that ends before its terminal event is llm.ErrTruncated.
// Event types nodmix does not read are skipped. See llm.Dialect.
func (dialect) Decode(r io.Reader, stream bool) iter.Seq2[llm.Event, error] {
	if !stream {
		return func(yield func(llm.Event, error) bool) {
			ev, err := decodeWhole(r)
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			yield(ev, nil)
		}
	}
	return func(yield func(llm.Event, error) bool) {
		var a assembler
		// An event that does not parse is an error only once another event follows it: the
		// last event of a cut stream is delivered unterminated, and that is a truncation.
		var bad error
		for sse, err := range llm.ReadSSE(r, 0) {
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			if bad != nil {
				yield(llm.Event{}, bad)
				return
			}
			var ev event
			if err := llm.UnmarshalLoose(sse.Data, &ev); err != nil {
				bad = fmt.Errorf("decode event: %w", err)
				continue
			}
			if ev.Type == "" {
				ev.Type = sse.Event
			}
			done, err := a.event(&ev, yield)
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			if done != nil {
				yield(*done, nil)
				return
			}
			if a.stopped {
				return
			}
		}
		yield(llm.Event{}, llm.ErrTruncated)
	}
}

func decodeWhole(r io.Reader) (llm.Event, error) {
	var resp responseObject
	b, err := llm.ReadDocument(r, &resp, true)
	if err != nil {
		return llm.Event{}, err
	}
	if resp.Status == "" && len(resp.Output) == 0 {
		// Not a Response object: an error of another shape, or nothing, is no empty answer.
		if e := resp.Error; e != nil && (e.Message != "" || len(e.Code) > 0) {
			return llm.Event{}, streamError(e)
		}
		if e := llm.ErrorDocument(b); e != nil {
			return llm.Event{}, e
		}
		return llm.Event{}, errors.New("decode response: not a Response object (no status, no output)")
	}
	var a assembler
	ev, err := a.finish(&resp)
	if err != nil {
		return llm.Event{}, err
	}
	return *ev, nil
}

// assembler builds the response message from the output items as they stream.
type assembler struct {
	slots   []*slot // by output_index
	calls   int     // function calls seen, for their Index
	stopped bool    // the consumer stopped ranging
}

// slot is one output item: what its deltas carried, and the whole item once it is done.
type slot struct {
	typ       string
	raw       json.RawMessage // the done item, as it came
	it        item
	text      strings.Builder // output text deltas
	reasoning strings.Builder // reasoning text deltas
	args      strings.Builder // argument deltas
	summary   int             // the summary part the reasoning deltas are in
	call      int             // position among the function calls
	announced bool
}

func (a *assembler) slot(i int) *slot {
	if i < 0 || i > 1<<16 {
		i = 0 // a hostile index must not size the slice
	}
	for len(a.slots) <= i {
		a.slots = append(a.slots, nil)
	}
	if a.slots[i] == nil {
		a.slots[i] = &slot{call: -1}
	}
	return a.slots[i]
}

func (a *assembler) emit(yield func(llm.Event, error) bool, ev llm.Event) {
	if !a.stopped && !yield(ev, nil) {
		a.stopped = true
	}
}

// event takes one stream event. It returns the final event at the stream's end.
func (a *assembler) event(ev *event, yield func(llm.Event, error) bool) (*llm.Event, error) {
	switch ev.Type {
	case "response.output_item.added", "response.output_item.done":
		if !isObject(ev.Item) {
			// An item that is null or missing tells nothing; kept as the item's raw bytes, it
			// would go back in every later request's input, which the API refuses.
			break
		}
		var it item
		if err := llm.UnmarshalLoose(ev.Item, &it); err != nil {
			return nil, fmt.Errorf("decode %s: %w", ev.Type, err)
		}
		s := a.slot(ev.OutputIndex)
		if s.typ == "" {
			s.typ = it.Type
		}
		if ev.Type == "response.output_item.done" {
			s.raw, s.it = ev.Item, it
		} else if s.raw == nil {
			s.it = it
		}
		if it.Type == "function_call" {
			a.announce(s, ev.Type == "response.output_item.done", yield)
		}
	case "response.output_text.delta", "response.refusal.delta":
		s := a.slot(ev.OutputIndex)
		s.text.WriteString(ev.Delta)
		if ev.Delta != "" {
			a.emit(yield, llm.Event{Kind: llm.EventText, Text: ev.Delta})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		s := a.slot(ev.OutputIndex)
		if ev.Delta == "" {
			break
		}
		t := ev.Delta
		// Summary parts read as paragraphs.
		idx := ev.SummaryIndex
		if ev.Type == "response.reasoning_text.delta" {
			idx = ev.ContentIndex
		}
		if idx > s.summary && s.reasoning.Len() > 0 {
			t = "\n\n" + t
		}
		s.summary = max(s.summary, idx)
		s.reasoning.WriteString(t)
		a.emit(yield, llm.Event{Kind: llm.EventReasoning, Text: t})
	case "response.function_call_arguments.delta":
		s := a.slot(ev.OutputIndex)
		s.args.WriteString(ev.Delta)
		if s.announced && ev.Delta != "" {
			a.emit(yield, llm.Event{Kind: llm.EventToolArgs, Index: s.call, Text: ev.Delta})
		}
	case "response.completed", "response.incomplete", "response.failed":
		if ev.Response == nil {
			return nil, fmt.Errorf("decode %s: no response", ev.Type)
		}
		if ev.Type == "response.failed" && ev.Response.Status == "" {
			ev.Response.Status = "failed"
		}
		return a.finish(ev.Response)
	case "error":
		e := ev.Error
		if e == nil {
			e = &apiError{Code: ev.Code, Message: ev.Message}
		}
		return nil, streamError(e)
	}
	return nil, nil
}

// announce tells of a function call once its name is known; arguments that came before the
// announcement (a call first seen done) go out with it.
func (a *assembler) announce(s *slot, done bool, yield func(llm.Event, error) bool) {
	if s.call < 0 {
		s.call = a.calls
		a.calls++
	}
	if s.announced || s.it.Name == "" {
		return
	}
	s.announced = true
	a.emit(yield, llm.Event{Kind: llm.EventToolCall, Index: s.call, CallID: s.it.CallID, Name: s.it.Name})
	args := s.args.String()
	if done && args == "" {
		args = s.it.Arguments
	}
	if args != "" {
		a.emit(yield, llm.Event{Kind: llm.EventToolArgs, Index: s.call, Text: args})
	}
}

func streamError(e *apiError) error {
	se := &llm.StreamError{Type: e.Type, Message: e.Message}
	if len(e.Code) > 0 && string(e.Code) != "null" {
		var s string
		if json.Unmarshal(e.Code, &s) != nil {
			s = string(e.Code)
		}
		if s != "" {
			se.Type = s
		}
	}
	if se.Message == "" {
		se.Message = "the response failed"
	}
	return se
}

// finish ends the response: the terminal event's Response object fills in the items the
// stream did not finish, and gives the status and usage.
func (a *assembler) finish(resp *responseObject) (*llm.Event, error) {
	switch resp.Status {
	case "failed":
		e := resp.Error
		if e == nil {
			e = &apiError{}
		}
		return nil, streamError(e)
	case "completed", "incomplete", "":
	default:
		return nil, fmt.Errorf("response status %q", resp.Status)
	}
	if resp.Error != nil && resp.Error.Message != "" {
		return nil, streamError(resp.Error)
	}
	for i, raw := range resp.Output {
		if !isObject(raw) {
			continue
		}
		s := a.slot(i)
		if s.raw != nil {
			continue
		}
		var it item
		if err := llm.UnmarshalLoose(raw, &it); err != nil {
			return nil, fmt.Errorf("decode response output %d: %w", i, err)
		}
		s.raw, s.it = raw, it
		if s.typ == "" {
			s.typ = it.Type
		}
	}

	msg := &llm.Message{Role: llm.RoleAssistant}
	calls := 0
	for _, s := range a.slots {
		if s == nil {
			continue
		}
		if p, ok := s.part(); ok {
			if p.Kind == llm.KindToolCall {
				calls++
			}
			msg.Parts = append(msg.Parts, p)
		}
	}
	ev := &llm.Event{Kind: llm.EventDone, Message: msg, Finish: "stop"}
	if calls > 0 {
		ev.Finish = "tool_calls"
	}
	if resp.Status == "incomplete" {
		ev.Finish = "length"
		if d := resp.IncompleteDetails; d != nil && d.Reason == "content_filter" {
			ev.Finish = "content_filter"
		}
	}
	if u := resp.Usage; u != nil {
		ev.Usage = &llm.Usage{
			InputTokens:     u.InputTokens,
			OutputTokens:    u.OutputTokens,
			ReasoningTokens: u.OutputTokensDetails.ReasoningTokens,
			CacheReadTokens: u.InputTokensDetails.CachedTokens,
			TotalTokens:     u.TotalTokens,
		}
	}
	return ev, nil
}

// part is the canonical part of one output item; ok is false for items nodmix does not model.
func (s *slot) part() (llm.Part, bool) {
	it := &s.it
	switch s.typ {
	case "reasoning":
		var texts []string
		for _, sm := range it.Summary {
			texts = append(texts, sm.Text)
		}
		if len(texts) == 0 {
			for _, c := range it.Content {
				texts = append(texts, c.Text)
			}
		}
		text := strings.Join(texts, "\n\n")
		if s.raw == nil || text == "" && s.reasoning.Len() > 0 {
			text = s.reasoning.String()
		}
		return llm.Part{Kind: llm.KindReasoning, Text: text, Raw: s.raw, Dialect: Name}, true
	case "message":
		var text string
		if s.raw != nil {
			var b strings.Builder // a provider's item may hold many content parts
			for _, c := range it.Content {
				b.WriteString(c.Text)
				b.WriteString(c.Refusal)
			}
			text = b.String()
		} else {
			text = s.text.String()
		}
		if text == "" {
			return llm.Part{}, false
		}
		return llm.Part{Kind: llm.KindText, Text: text, Meta: metaOf(it.ID, it.Phase), Dialect: Name}, true
	case "function_call":
		args := it.Arguments
		if s.raw == nil {
			args = s.args.String()
		}
		return llm.Part{Kind: llm.KindToolCall, CallID: it.CallID, Name: it.Name, Args: llm.CallArgs(args), Meta: metaOf(it.ID, ""), Dialect: Name}, true
	}
	return llm.Part{}, false
}

// isObject reports whether raw is a JSON object (it was decoded, so it is valid JSON).
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

func metaOf(id, phase string) json.RawMessage {
	if id == "" && phase == "" {
		return nil
	}
	b, _ := json.Marshal(meta{ID: id, Phase: phase})
	return b
}
