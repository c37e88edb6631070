package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
)

// begin reads the session and returns it with what the turn adds before its first model call:
// the input without tool results that answer no open call nor a question it repeats, after
// results closing the client calls left unanswered, with the tool names results lack.
func (r *Runner) begin(ctx context.Context, t Turn) (history, input []llm.Message, err error) {
	history, err = r.Sessions.Transcript(ctx, t.Session)
	if err != nil && !errors.Is(err, session.ErrNotFound) {
		return nil, nil, fmt.Errorf("session %q: %w", t.Session, err)
	}
	input = t.Input
	if len(input) > 0 {
		if input = dropStale(history, input); len(input) == 0 {
			return nil, nil, fmt.Errorf("session %q: %w: the tool results sent answer no open tool call", t.Session, ErrBusy)
		}
	}
	input = closeInput(dropRetried(history, input))
	if closing := unanswered(history, input); len(closing) > 0 {
		// A new message after client tool calls the client never answered: every provider
		// refuses a call without its result, so the calls are closed first.
		input = append(closing, input...)
	}
	t.Input = input
	if err := checkInput(t, history); err != nil {
		return nil, nil, fmt.Errorf("session %q: %w: %w", t.Session, ErrUnsendable, err)
	}
	if len(input) > 0 {
		input = nameResults(history, input)
	}
	return history, input, nil
}

// unanswered returns tool results closing the calls of the history's last assistant message
// that have none, when the new input does not answer them itself.
func unanswered(history, input []llm.Message) []llm.Message {
	last := -1
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == llm.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, msgs := range [][]llm.Message{history[last+1:], input} {
		for _, m := range msgs {
			for _, p := range m.Parts {
				if p.Kind == llm.KindToolResult {
					answered[p.CallID] = true
				}
			}
		}
	}
	var out []llm.Message
	for _, c := range history[last].ToolCalls() {
		if !answered[c.CallID] {
			out = append(out, llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: c.CallID, Name: c.Name,
				Text: "No result: the client did not answer this call.", IsError: true}}})
		}
	}
	return out
}

// closeInput returns input with a result closing each call of its assistant messages that the
// tool messages right after it leave unanswered (a client's conversation that dropped them).
// Unanswered calls of the history are unanswered's.
func closeInput(input []llm.Message) []llm.Message {
	var out []llm.Message // nil until a call needs closing
	var open []llm.Part   // calls of the input's last assistant message not yet answered
	flush := func(i int) {
		if len(open) == 0 {
			return
		}
		if out == nil {
			out = append(make([]llm.Message, 0, len(input)+len(open)), input[:i]...)
		}
		for _, c := range open {
			out = append(out, llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: c.CallID, Name: c.Name,
				Text: "No result: the client did not answer this call.", IsError: true}}})
		}
		open = nil
	}
	for i, m := range input {
		switch m.Role {
		case llm.RoleTool:
			for _, p := range m.Parts {
				if p.Kind == llm.KindToolResult {
					open = slices.DeleteFunc(open, func(c llm.Part) bool { return c.CallID == p.CallID })
				}
			}
		case llm.RoleAssistant:
			flush(i)
			open = m.ToolCalls()
		default:
			flush(i)
		}
		if out != nil {
			out = append(out, m)
		}
	}
	flush(len(input))
	if out == nil {
		return input
	}
	return out
}

// dropRetried returns input without its leading user messages that repeat the question history
// ends with, after its last answer: a turn that failed after its question was stored, maybe
// with some of its tool steps, is retried with that question again (an OpenAI client resends
// it), which would otherwise be kept twice. When several questions in a row went unanswered, a
// retry may resend only the last of them (a client that kept only what it still wants asked):
// the longest end of the unanswered questions that input starts with is dropped.
func dropRetried(history, input []llm.Message) []llm.Message {
	end := len(history) // the question ends where the turn's tool steps start
	for end > 0 && (history[end-1].Role == llm.RoleTool || history[end-1].Role == llm.RoleAssistant && len(history[end-1].ToolCalls()) > 0) {
		end--
	}
	tail := end
	for tail > 0 && history[tail-1].Role == llm.RoleUser {
		tail--
	}
	asked := history[tail:end]
	for k := min(len(asked), len(input)); k > 0; k-- {
		if startsWith(input, asked[len(asked)-k:]) {
			return input[k:]
		}
	}
	return input // not a retry of the unanswered question
}

// startsWith reports whether input's first user messages are those of asked.
func startsWith(input, asked []llm.Message) bool {
	for i := range asked {
		if !sameUserMessage(asked[i], input[i]) {
			return false
		}
	}
	return true
}

// sameUserMessage reports whether a and b are the same user message: text and images.
func sameUserMessage(a, b llm.Message) bool {
	if a.Role != llm.RoleUser || b.Role != llm.RoleUser || len(a.Parts) != len(b.Parts) {
		return false
	}
	for i := range a.Parts {
		x, y := &a.Parts[i], &b.Parts[i]
		if x.Kind != y.Kind || x.Text != y.Text || x.ImageURL != y.ImageURL || x.Kind != llm.KindText && x.Kind != llm.KindImage {
			return false
		}
	}
	return true
}

// checkInput asks a model that can tell whether the turn's first request could carry its new
// input. Only a failure the input brings counts: a history this model cannot take (stored
// under another provider) fails at the call, as before, and is not the new input's fault.
func checkInput(t Turn, history []llm.Message) error {
	rc, ok := t.Model.(RequestChecker)
	if !ok || len(t.Input) == 0 {
		return nil
	}
	req := func(msgs []llm.Message) *llm.Request {
		return &llm.Request{Model: t.ModelID, System: t.System, Messages: ownOpaque(msgs, t.provider()),
			MaxTokens: t.MaxTokens, Temperature: t.Temperature, Stream: t.Stream}
	}
	err := rc.CheckRequest(req(append(slices.Clip(history), t.Input...)))
	if err == nil || len(history) > 0 && rc.CheckRequest(req(history)) != nil {
		return nil
	}
	return err
}

// dropStale returns input without the tool results that answer no open call: a call of the
// assistant message they follow (with only tool messages between) that has no result yet. A
// client retrying a request that already ran, or answering a call that was closed, sends such
// results; stored, they would make every later request of the session one that providers
// refuse. Tool messages left empty go too.
func dropStale(history, input []llm.Message) []llm.Message {
	var open map[string]bool
	track := func(m *llm.Message) {
		switch m.Role {
		case llm.RoleAssistant:
			open = map[string]bool{}
			for _, c := range m.ToolCalls() {
				open[c.CallID] = true
			}
		case llm.RoleTool:
			for _, p := range m.Parts {
				if p.Kind == llm.KindToolResult {
					delete(open, p.CallID)
				}
			}
		default:
			open = nil
		}
	}
	for i := range history {
		track(&history[i])
	}
	out := make([]llm.Message, 0, len(input))
	for _, m := range input {
		if m.Role != llm.RoleTool {
			track(&m)
			out = append(out, m)
			continue
		}
		var parts []llm.Part
		for _, p := range m.Parts {
			if p.Kind == llm.KindToolResult {
				if !open[p.CallID] {
					continue
				}
				delete(open, p.CallID)
			}
			parts = append(parts, p)
		}
		if len(parts) > 0 {
			out = append(out, llm.Message{Role: m.Role, Parts: parts})
		}
	}
	return out
}

// nameResults fills in the tool name of results that carry only a call id (OpenAI's tool
// messages have none; Gemini and Ollama need it), from the calls they answer.
func nameResults(history, input []llm.Message) []llm.Message {
	var names map[string]string
	out := input
	for i, m := range input {
		for j, p := range m.Parts {
			if p.Kind != llm.KindToolResult || p.Name != "" {
				continue
			}
			if names == nil {
				names = map[string]string{}
				for _, msgs := range [][]llm.Message{history, input} {
					for _, h := range msgs {
						for _, c := range h.ToolCalls() {
							names[c.CallID] = c.Name
						}
					}
				}
				out = append([]llm.Message(nil), input...)
			}
			if n, ok := names[p.CallID]; ok {
				parts := append([]llm.Part(nil), out[i].Parts...)
				parts[j].Name = n
				out[i] = llm.Message{Role: m.Role, Parts: parts}
			}
		}
	}
	return out
}
