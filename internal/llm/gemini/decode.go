package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// Decode reads a generateContent answer: one JSON document, or (stream) SSE events each holding
// one GenerateContentResponse chunk. Gemini has no terminal event, so a stream is complete when
// it ends after a chunk that gave a finishReason (or a prompt block); EventDone comes at its end.
func (dialect) Decode(r io.Reader, stream bool) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		a := assembler{yield: yield}
		if !stream {
			var resp response
			b, err := llm.ReadDocument(r, &resp, false)
			if err != nil {
				if e := llm.ErrorDocument(b); e != nil && !errors.Is(err, llm.ErrTruncated) {
					yield(llm.Event{}, e) // an error member of another shape
					return
				}
				yield(llm.Event{}, fmt.Errorf("gemini: %w", err))
				return
			}
			if resp.Error == nil && resp.Candidates == nil && resp.PromptFeedback == nil {
				yield(llm.Event{}, errors.New("gemini: decode response: no candidates"))
				return
			}
			if a.add(&resp) {
				a.done()
			}
			return
		}
		for ev, err := range llm.ReadSSE(r, 0) {
			if err != nil {
				yield(llm.Event{}, fmt.Errorf("gemini: %w", err))
				return
			}
			data := bytes.TrimSpace(ev.Data)
			if len(data) == 0 || string(data) == "[DONE]" {
				continue
			}
			var resp response
			if err := json.Unmarshal(data, &resp); err != nil {
				if llm.CutShort(err, data) {
					err = llm.ErrTruncated
				}
				yield(llm.Event{}, fmt.Errorf("gemini: stream chunk: %w", err))
				return
			}
			if !a.add(&resp) {
				return
			}
		}
		if !a.finished {
			yield(llm.Event{}, fmt.Errorf("gemini: stream ended without a finishReason: %w", llm.ErrTruncated))
			return
		}
		a.done()
	}
}

// assembler turns response chunks into events and the final message. Text arrives in pieces;
// consecutive pieces of one kind join into one Part, except across a thoughtSignature: a signed
// part stays a part of its own, so it goes back to Gemini exactly as it came.
type assembler struct {
	yield    func(llm.Event, error) bool
	parts    []llm.Part
	buf      strings.Builder // text of the last part while it can still grow
	open     bool            // the last part is an unsigned text or reasoning part held in buf
	calls    int
	finish   string // Gemini's finishReason
	blocked  bool   // the prompt was blocked: no candidates will come
	finished bool
	usage    *llm.Usage
}

// add takes one chunk; false means stop (the consumer stopped, or an error was yielded).
func (a *assembler) add(resp *response) bool {
	if resp.Error != nil {
		e := resp.Error
		typ := e.Status
		if typ == "" && e.Code != 0 {
			typ = strconv.Itoa(e.Code)
		}
		a.yield(llm.Event{}, &llm.StreamError{Type: typ, Message: e.Message})
		return false
	}
	if u := resp.UsageMetadata; u != nil {
		a.usage = &llm.Usage{
			InputTokens:     u.PromptTokenCount,
			OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
			ReasoningTokens: u.ThoughtsTokenCount,
			CacheReadTokens: u.CachedContentTokenCount,
			TotalTokens:     u.TotalTokenCount,
		}
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" && len(resp.Candidates) == 0 {
		a.blocked, a.finished = true, true
	}
	for i := range resp.Candidates {
		c := &resp.Candidates[i]
		if c.Index != 0 { // nodmix asks for one candidate; others (through Extra) are not read
			continue
		}
		if c.Content != nil {
			for j := range c.Content.Parts {
				if !a.part(&c.Content.Parts[j]) {
					return false
				}
			}
		}
		if c.FinishReason != "" && c.FinishReason != "FINISH_REASON_UNSPECIFIED" {
			a.finish, a.finished = c.FinishReason, true
		}
	}
	return true
}

func (a *assembler) part(wp *part) bool {
	var md meta
	md.ThoughtSignature = wp.ThoughtSignature
	switch {
	case wp.FunctionCall != nil:
		a.close()
		fc := wp.FunctionCall
		idx := a.calls
		a.calls++
		id := fc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(idx)
		}
		md.ID = fc.ID
		args := llm.ObjectArgs(fc.Args)
		p := llm.Part{Kind: llm.KindToolCall, CallID: id, Name: fc.Name, Args: args}
		a.stamp(&p, md)
		a.parts = append(a.parts, p)
		return a.yield(llm.Event{Kind: llm.EventToolCall, Index: idx, CallID: id, Name: fc.Name}, nil) &&
			a.yield(llm.Event{Kind: llm.EventToolArgs, Index: idx, Text: string(args)}, nil)
	case wp.Text != nil || wp.InlineData == nil && md.ThoughtSignature != "":
		// A part that carries only a signature is kept as an empty one, to go back as it came.
		var text string
		if wp.Text != nil {
			text = *wp.Text
		}
		kind, ev := llm.KindText, llm.EventText
		if wp.Thought {
			kind, ev = llm.KindReasoning, llm.EventReasoning
		}
		if text == "" && md.ThoughtSignature == "" {
			return true
		}
		if a.open && md.ThoughtSignature == "" && a.parts[len(a.parts)-1].Kind == kind {
			a.buf.WriteString(text)
		} else {
			a.close()
			p := llm.Part{Kind: kind}
			if kind == llm.KindReasoning {
				p.Dialect = Name
			}
			a.stamp(&p, md)
			a.parts = append(a.parts, p)
			a.buf.WriteString(text)
			a.open = true
			if md.ThoughtSignature != "" {
				a.close()
			}
		}
		if text == "" {
			return true
		}
		return a.yield(llm.Event{Kind: ev, Text: text}, nil)
	case wp.InlineData != nil:
		a.close()
		p := llm.Part{Kind: llm.KindImage, ImageURL: "data:" + wp.InlineData.MimeType + ";base64," + wp.InlineData.Data}
		a.stamp(&p, md)
		a.parts = append(a.parts, p)
	}
	// Other part types (executableCode, …) come only from tools nodmix does not declare.
	return true
}

// stamp attaches Gemini's data to p, marking it as this dialect's.
func (a *assembler) stamp(p *llm.Part, md meta) {
	if md == (meta{}) {
		return
	}
	b, _ := json.Marshal(md) // two strings: cannot fail
	p.Dialect, p.Meta = Name, b
}

// close moves the growing text into its part.
func (a *assembler) close() {
	if a.open {
		a.parts[len(a.parts)-1].Text = a.buf.String()
		a.buf.Reset()
		a.open = false
	}
}

func (a *assembler) done() {
	a.close()
	parts := a.parts
	if parts == nil {
		parts = []llm.Part{}
	}
	a.yield(llm.Event{
		Kind:    llm.EventDone,
		Message: &llm.Message{Role: llm.RoleAssistant, Parts: parts},
		Usage:   a.usage,
		Finish:  a.finishWord(),
	}, nil)
}

// finishWord maps Gemini's finishReason to the canonical words; reasons without one pass
// through in lower case ("malformed_function_call", "other", …).
func (a *assembler) finishWord() string {
	if a.blocked && a.finish == "" {
		return "content_filter"
	}
	switch a.finish {
	case "STOP", "":
		if a.calls > 0 {
			return "tool_calls"
		}
		if a.finish == "" {
			return ""
		}
		return "stop"
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return "content_filter"
	}
	return strings.ToLower(a.finish)
}
