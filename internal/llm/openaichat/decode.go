package openaichat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
)

// Decode reads a completion, or a stream of chunks ending in `data: [DONE]`. See llm.Dialect.
//
// A stream is complete only with its [DONE]: one that ends without it yields llm.ErrTruncated
// even after a finish_reason, since the usage chunk comes after the finish_reason and a cut
// there is still a cut (OpenAI, DeepSeek, Moonshot, Z.AI and OpenRouter all send [DONE]).
func (d *dialect) Decode(r io.Reader, stream bool) iter.Seq2[llm.Event, error] {
	if !stream {
		return func(yield func(llm.Event, error) bool) {
			ev, err := d.decodeWhole(r)
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			yield(ev, nil)
		}
	}
	return func(yield func(llm.Event, error) bool) {
		a := assembler{q: &d.q, details: details{cumulative: d.q.DetailsCumulative}}
		// A chunk that does not parse is an error only once another event follows it: the
		// last event of a cut stream is delivered unterminated, and that is a truncation.
		var bad error
		var c response
		for sse, err := range llm.ReadSSE(r, 0) {
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			if bad != nil {
				yield(llm.Event{}, bad)
				return
			}
			if sse.Done() {
				yield(a.done(), nil)
				return
			}
			// One response value serves every chunk; decoding into a slice reuses its elements
			// as they are, so they are cleared first.
			clear(c.Choices)
			c = response{Choices: c.Choices[:0]}
			if err := llm.UnmarshalLoose(sse.Data, &c); err != nil {
				bad = fmt.Errorf("decode chunk: %w", err)
				continue
			}
			if c.Error != nil || sse.Event == "error" {
				yield(llm.Event{}, streamError(c.Error, sse.Data))
				return
			}
			if err := c.BaseResp.err(); err != nil {
				yield(llm.Event{}, err)
				return
			}
			if !a.chunk(&c, yield) {
				return
			}
		}
		yield(llm.Event{}, llm.ErrTruncated)
	}
}

func (d *dialect) decodeWhole(r io.Reader) (llm.Event, error) {
	var c response
	b, err := llm.ReadDocument(r, &c, true)
	if err != nil {
		return llm.Event{}, err
	}
	if c.Error != nil {
		return llm.Event{}, streamError(c.Error, b)
	}
	if err := c.BaseResp.err(); err != nil {
		return llm.Event{}, err
	}
	a := assembler{q: &d.q}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		m := &ch.Message
		a.text.WriteString(m.Content.text)
		a.text.WriteString(m.Refusal)
		a.rtext.WriteString(reasoningOf(m))
		if d.q.ReasoningDetails && len(m.ReasoningDetails) > 0 && string(m.ReasoningDetails) != "null" {
			// Whole, the array is kept exactly as it came.
			a.wholeDetails = m.ReasoningDetails
			if m.ReasoningContent == "" && m.Reasoning == "" {
				a.rtext.WriteString(detailsText(m.ReasoningDetails))
			}
		}
		for j := range m.ToolCalls {
			// Whole, each element is a call of its own, whatever index or id it has (none,
			// often): read as stream deltas, calls without ids merged into one.
			tc := &m.ToolCalls[j]
			tc.Index = &j
			if !a.call(tc, nil) {
				return llm.Event{}, a.err
			}
		}
		if ch.FinishReason != nil {
			a.finish = *ch.FinishReason
		}
		if ch.Usage != nil {
			a.usage = ch.Usage
		}
	}
	if c.Usage != nil {
		a.usage = c.Usage
	}
	if len(c.Choices) == 0 {
		if e := llm.ErrorDocument(b); e != nil {
			return llm.Event{}, e
		}
		return llm.Event{}, errors.New("decode response: no choices")
	}
	return a.done(), nil
}

func streamError(e *apiError, data []byte) error {
	if e == nil {
		// An `event: error` whose data is not {"error": …}.
		var flat apiError
		_ = json.Unmarshal(data, &flat)
		if flat.Message == "" {
			flat.Message = llm.ErrorMessage(data)
		}
		if flat.Message == "" {
			flat.Message = strings.TrimSpace(string(data))
		}
		e = &flat
	}
	se := &llm.StreamError{Type: e.Type, Message: e.Message}
	if se.Message == "" {
		// An error member of another shape ({"error": "…"}) decodes to an empty one.
		if de := llm.ErrorDocument(data); de != nil {
			se.Message = de.Message
		}
	}
	if se.Type == "" && len(e.Code) > 0 && string(e.Code) != "null" {
		var s string
		if json.Unmarshal(e.Code, &s) != nil {
			s = string(e.Code)
		}
		se.Type = s
	}
	return se
}

// err is the error a MiniMax status reports, nil for success or none. Any Chat Completions
// response is checked, not only those of MiniMax's hosts: the member is MiniMax's (no other
// server sends it), a proxy or a custom base URL in front of MiniMax sends it the same, and
// its success value, 0, is ignored. A failure is reported even beside choices, as an answer
// the provider says failed is not one to keep.
func (r *baseResp) err() error {
	if r == nil {
		return nil
	}
	text := string(r.StatusCode)
	if s, err := strconv.Unquote(text); err == nil {
		text = s
	}
	code, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil || code == 0 {
		return nil // success, or not MiniMax's envelope after all
	}
	msg := r.StatusMsg
	if msg == "" {
		msg = "the request failed"
	}
	return &llm.StreamError{Type: "status_code " + strconv.FormatInt(code, 10), Message: msg, Status: miniMaxStatus(code)}
}

// miniMaxStatus is the HTTP status a MiniMax error code stands for, after the remedies its
// error-code page gives (https://platform.minimax.io/docs/api-reference/errorcode): "retry
// later" is a 503 (a 429 for the rate limit), "check your API key" a 401, "check your balance"
// a 402, and a refused input a 400. An undocumented code stands for none.
func miniMaxStatus(code int64) int {
	switch code {
	case 1002: // rate limit
		return http.StatusTooManyRequests
	case 1000, 1001, 1024, 1033: // unknown, timeout, internal, downstream
		return http.StatusServiceUnavailable
	case 1004: // not authorized
		return http.StatusUnauthorized
	case 1008: // insufficient balance
		return http.StatusPaymentRequired
	case 1026, 1027, 2013: // sensitive input, sensitive output, invalid parameters
		return http.StatusBadRequest
	}
	return 0
}

// assembler builds the response message from chunks (or one whole completion).
type assembler struct {
	q            *Quirks
	text         strings.Builder
	rtext        strings.Builder // reasoning text, shown
	details      details         // streamed reasoning_details, merged
	wholeDetails json.RawMessage // a whole completion's reasoning_details
	calls        []*call
	byIndex      map[int]int // the provider's tool call index → position in calls
	finish       string
	usage        *usage
	err          error // why call stopped the decoding, when it was not the consumer
}

// maxCalls bounds the tool calls of one response, far above any model's parallel calls: each
// index a stream names costs a call's bookkeeping, many times the few bytes that name it, and
// a broken or hostile server must not turn the response bound into gigabytes of calls.
const maxCalls = 1 << 14

type call struct {
	id, name  string
	args      strings.Builder
	announced bool
}

// chunk takes one stream chunk and yields its deltas; it returns false when the consumer stopped.
func (a *assembler) chunk(c *response, yield func(llm.Event, error) bool) bool {
	if c.Usage != nil {
		a.usage = c.Usage
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 { // n > 1 is not asked for; only the first choice is read
			continue
		}
		if ch.Usage != nil {
			a.usage = ch.Usage
		}
		dl := &ch.Delta
		if r := reasoningOf(dl); r != "" {
			a.rtext.WriteString(r)
			if !yield(llm.Event{Kind: llm.EventReasoning, Text: r}, nil) {
				return false
			}
		}
		if a.q.ReasoningDetails && len(dl.ReasoningDetails) > 0 {
			t, err := a.details.add(dl.ReasoningDetails)
			if err != nil {
				yield(llm.Event{}, fmt.Errorf("decode chunk: reasoning_details: %w", err))
				return false
			}
			if t != "" && dl.ReasoningContent == "" && dl.Reasoning == "" {
				a.rtext.WriteString(t)
				if !yield(llm.Event{Kind: llm.EventReasoning, Text: t}, nil) {
					return false
				}
			}
		}
		if t := dl.Content.text + dl.Refusal; t != "" {
			a.text.WriteString(t)
			if !yield(llm.Event{Kind: llm.EventText, Text: t}, nil) {
				return false
			}
		}
		for j := range dl.ToolCalls {
			if !a.call(&dl.ToolCalls[j], yield) {
				if a.err != nil {
					yield(llm.Event{}, a.err)
				}
				return false
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
	}
	return true
}

// reasoningOf is a delta's (or message's) reasoning text. Servers moving from
// reasoning_content to reasoning send both with the same text; the first wins.
func reasoningOf(d *delta) string {
	switch {
	case d.ReasoningContent != "":
		return d.ReasoningContent
	case d.Reasoning != "":
		return d.Reasoning
	}
	return d.Content.thinking
}

// call takes one tool call delta; false means stop: the consumer stopped, or (a.err) the
// response has too many calls. Calls are told apart by their index; a delta with no index
// continues the last call unless it brings a new id, and a known index that brings a different
// id starts a new call (servers that number every call 0).
func (a *assembler) call(cd *callDelta, yield func(llm.Event, error) bool) bool {
	pos := -1
	switch {
	case cd.Index != nil:
		if p, ok := a.byIndex[*cd.Index]; ok && (cd.ID == "" || a.calls[p].id == "" || a.calls[p].id == cd.ID) {
			pos = p
		}
	case len(a.calls) > 0:
		last := len(a.calls) - 1
		if cd.ID == "" || a.calls[last].id == "" || a.calls[last].id == cd.ID {
			pos = last
		}
	}
	if pos < 0 {
		if len(a.calls) == maxCalls {
			a.err = fmt.Errorf("decode response: more than %d tool calls", maxCalls)
			return false
		}
		pos = len(a.calls)
		a.calls = append(a.calls, &call{})
		if cd.Index != nil {
			if a.byIndex == nil {
				a.byIndex = map[int]int{}
			}
			a.byIndex[*cd.Index] = pos
		}
	}
	c := a.calls[pos]
	if c.id == "" {
		c.id = cd.ID
	}
	if c.name == "" {
		c.name = cd.Function.Name
	}
	var delta string
	if args := cd.Function.Arguments; len(args) > 0 && string(args) != "null" {
		if args[0] != '"' || json.Unmarshal(args, &delta) != nil {
			delta = string(args) // an object sent as itself
		}
	}
	c.args.WriteString(delta)
	if yield == nil {
		return true
	}
	if !c.announced && c.name != "" {
		c.announced = true
		if !yield(llm.Event{Kind: llm.EventToolCall, Index: pos, CallID: c.id, Name: c.name}, nil) {
			return false
		}
		// Arguments that came before the name go out with the announcement.
		delta = c.args.String()
	}
	if c.announced && delta != "" {
		return yield(llm.Event{Kind: llm.EventToolArgs, Index: pos, Text: delta}, nil)
	}
	return true
}

// done assembles the final event: reasoning, then text, then tool calls, as Chat Completions
// orders them.
func (a *assembler) done() llm.Event {
	msg := &llm.Message{Role: llm.RoleAssistant}
	rtext := a.rtext.String()
	switch {
	case len(a.wholeDetails) > 0:
		msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindReasoning, Text: rtext, Raw: a.wholeDetails, Dialect: Name})
	case len(a.details.items) > 0:
		msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindReasoning, Text: rtext, Raw: a.details.raw(), Dialect: Name})
	case rtext != "":
		raw, _ := json.Marshal(rtext)
		msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindReasoning, Text: rtext, Raw: raw, Dialect: Name})
	}
	if t := a.text.String(); t != "" {
		msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindText, Text: t})
	}
	calls := 0
	for i, c := range a.calls {
		if c.name == "" && strings.TrimSpace(c.args.String()) == "" {
			// A delta that never named a call nor gave it arguments (`tool_calls: [null]`, a
			// stray index) is no call: run, it is an unknown tool; stored, a call without a
			// name that every later request sends back.
			continue
		}
		calls++
		id := c.id
		if id == "" {
			id = "call_" + strconv.Itoa(i)
		}
		msg.Parts = append(msg.Parts, llm.Part{Kind: llm.KindToolCall, CallID: id, Name: c.name, Args: llm.CallArgs(c.args.String())})
	}
	ev := llm.Event{Kind: llm.EventDone, Message: msg, Finish: a.finish}
	switch {
	case a.finish == "function_call":
		ev.Finish = "tool_calls"
	case a.finish == "stop" && calls > 0:
		// Some servers say "stop" after tool calls; the loop reads the calls either way.
		ev.Finish = "tool_calls"
	}
	if u := a.usage; u != nil {
		cached := u.PromptTokensDetails.CachedTokens
		if cached == 0 {
			cached = max(u.PromptCacheHitTokens, u.CachedTokens)
		}
		ev.Usage = &llm.Usage{
			InputTokens:     u.PromptTokens,
			OutputTokens:    u.CompletionTokens,
			ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
			CacheReadTokens: cached,
			TotalTokens:     u.TotalTokens,
		}
	}
	return ev
}
