package ollama

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// Decode reads an /api/chat answer: NDJSON lines (stream) or one JSON document. The answer is
// complete at the line with `done: true`; EventDone comes there, and nothing after it is read.
func (dialect) Decode(r io.Reader, stream bool) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		a := assembler{yield: yield}
		if !stream {
			var resp chatResponse
			if _, err := llm.ReadDocument(r, &resp, false); err != nil {
				yield(llm.Event{}, fmt.Errorf("ollama: %w", err))
				return
			}
			if a.add(&resp) && !a.finished {
				yield(llm.Event{}, fmt.Errorf("ollama: response without done: %w", llm.ErrTruncated))
			}
			return
		}
		for line, err := range llm.ReadNDJSON(r, 0) {
			if err != nil {
				yield(llm.Event{}, fmt.Errorf("ollama: %w", err))
				return
			}
			var resp chatResponse
			if err := json.Unmarshal(line, &resp); err != nil {
				if llm.CutShort(err, line) {
					err = llm.ErrTruncated
				}
				yield(llm.Event{}, fmt.Errorf("ollama: stream line: %w", err))
				return
			}
			if !a.add(&resp) || a.finished {
				return
			}
		}
		yield(llm.Event{}, fmt.Errorf("ollama: stream ended without done: %w", llm.ErrTruncated))
	}
}

// assembler turns response lines into events and the final message; consecutive pieces of
// text, or of thinking, join into one Part.
type assembler struct {
	yield    func(llm.Event, error) bool
	parts    []llm.Part
	buf      strings.Builder // text of the last part while it can still grow
	open     bool            // the last part is a text or reasoning part held in buf
	calls    int
	finished bool
}

// add takes one line; false means stop (done, the consumer stopped, or an error was yielded).
func (a *assembler) add(resp *chatResponse) bool {
	if len(resp.Error) > 0 && string(resp.Error) != "null" {
		// Ollama sends a string; an object with a message is what proxies in front of it send.
		var msg string
		if json.Unmarshal(resp.Error, &msg) != nil {
			doc := append(append([]byte(`{"error":`), resp.Error...), '}')
			if msg = llm.ErrorMessage(doc); msg == "" {
				msg = string(resp.Error)
			}
		}
		a.yield(llm.Event{}, &llm.StreamError{Message: msg})
		return false
	}
	if m := resp.Message; m != nil {
		if m.Thinking != "" && !a.text(llm.KindReasoning, m.Thinking) {
			return false
		}
		if m.Content != "" && !a.text(llm.KindText, m.Content) {
			return false
		}
		for i := range m.ToolCalls {
			if !a.call(&m.ToolCalls[i]) {
				return false
			}
		}
	}
	if resp.Done {
		a.finished = true
		a.close()
		parts := a.parts
		if parts == nil {
			parts = []llm.Part{}
		}
		ev := llm.Event{Kind: llm.EventDone, Message: &llm.Message{Role: llm.RoleAssistant, Parts: parts}, Finish: a.finishWord(resp.DoneReason)}
		if resp.PromptEvalCount > 0 || resp.EvalCount > 0 {
			ev.Usage = &llm.Usage{InputTokens: resp.PromptEvalCount, OutputTokens: resp.EvalCount, TotalTokens: resp.PromptEvalCount + resp.EvalCount}
		}
		a.yield(ev, nil)
		return false
	}
	return true
}

func (a *assembler) text(kind llm.Kind, s string) bool {
	if !a.open || a.parts[len(a.parts)-1].Kind != kind {
		a.close()
		p := llm.Part{Kind: kind}
		if kind == llm.KindReasoning {
			p.Dialect = Name
		}
		a.parts = append(a.parts, p)
		a.open = true
	}
	a.buf.WriteString(s)
	ev := llm.EventText
	if kind == llm.KindReasoning {
		ev = llm.EventReasoning
	}
	return a.yield(llm.Event{Kind: ev, Text: s}, nil)
}

func (a *assembler) call(tc *toolCall) bool {
	a.close()
	idx := a.calls
	a.calls++
	id := tc.ID
	if id == "" {
		id = "call_" + strconv.Itoa(idx)
	}
	args := llm.ObjectArgs(tc.Function.Arguments)
	a.parts = append(a.parts, llm.Part{Kind: llm.KindToolCall, CallID: id, Name: tc.Function.Name, Args: args})
	return a.yield(llm.Event{Kind: llm.EventToolCall, Index: idx, CallID: id, Name: tc.Function.Name}, nil) &&
		a.yield(llm.Event{Kind: llm.EventToolArgs, Index: idx, Text: string(args)}, nil)
}

// close moves the growing text into its part.
func (a *assembler) close() {
	if a.open {
		a.parts[len(a.parts)-1].Text = a.buf.String()
		a.buf.Reset()
		a.open = false
	}
}

// finishWord is done_reason in the canonical words: "stop" with calls is "tool_calls"; other
// reasons ("length", "load", …) pass through.
func (a *assembler) finishWord(reason string) string {
	if a.calls > 0 && (reason == "" || reason == "stop") {
		return "tool_calls"
	}
	return reason
}
