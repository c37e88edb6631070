package provider

import (
	"encoding/json"
	"io"
	"iter"
	"net/url"
	"slices"
	"strings"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/openaichat"
	"github.com/nodmix/nodmix/internal/thinktag"
)

// thinkTagHosts are the Chat Completions endpoints whose models write their reasoning into the
// answer's content as <think>…</think>: MiniMax's OpenAI-compatible API, international and
// China (https://platform.minimax.io/docs/api-reference/text-openai-api). They are told by
// host, so that a custom openai-completions entry pointed at them behaves like one.
var thinkTagHosts = []string{"api.minimax.io", "api.minimaxi.com"}

// thinkTagProfile is the provider whose quirks (dialects.go) an entry at thinkTagHosts speaks
// with, whatever its id.
const thinkTagProfile = "minimax"

// thinkTagDialect is the Part.Dialect of the reasoning thinkTags split off an answer; its Raw
// is the answer's content as the provider sent it, a JSON string.
const thinkTagDialect = "openai-completions+think-tags"

// thinkTagged reports whether a provider's answers come with <think> blocks in their content.
func thinkTagged(api, baseURL string) bool {
	if api != openaichat.Name {
		return false
	}
	u, err := url.Parse(baseURL)
	return err == nil && slices.Contains(thinkTagHosts, strings.ToLower(u.Hostname()))
}

// thinkTags wraps a Chat Completions dialect for a provider that writes reasoning inside
// content: answers are split into reasoning and visible text (deltas through a thinktag.Filter,
// the final message by thinktag.Split), and requests send each answer's content back exactly as
// it came, tags and all, which MiniMax requires of a tool loop ("the content field will contain
// <think> tag content, which must be preserved completely").
type thinkTags struct{ llm.Dialect }

var _ llm.Dialect = thinkTags{}

// Encode puts the content each split answer came with back in place of its visible text.
func (d thinkTags) Encode(req *llm.Request, p llm.Patch) (*llm.Encoded, error) {
	var msgs []llm.Message
	for i, m := range req.Messages {
		parts, ok := joinThinkTags(m.Parts)
		if !ok {
			if msgs != nil {
				msgs = append(msgs, m)
			}
			continue
		}
		if msgs == nil {
			msgs = append(make([]llm.Message, 0, len(req.Messages)), req.Messages[:i]...)
		}
		msgs = append(msgs, llm.Message{Role: m.Role, Parts: parts})
	}
	if msgs == nil {
		return d.Dialect.Encode(req, p)
	}
	r := *req
	r.Messages = msgs
	return d.Dialect.Encode(&r, p)
}

// joinThinkTags returns parts with the split-off reasoning removed and the text parts replaced
// by the content kept in its Raw; false when parts hold no such reasoning.
func joinThinkTags(parts []llm.Part) ([]llm.Part, bool) {
	at := slices.IndexFunc(parts, func(p llm.Part) bool {
		return p.Kind == llm.KindReasoning && p.Dialect == thinkTagDialect && len(p.Raw) > 0
	})
	if at < 0 {
		return nil, false
	}
	var content string
	if err := json.Unmarshal(parts[at].Raw, &content); err != nil {
		return nil, false // not ours after all: the message goes as it is
	}
	out := make([]llm.Part, 0, len(parts))
	placed := false
	for i, p := range parts {
		switch {
		case i == at:
			continue
		case p.Kind == llm.KindText:
			if placed {
				continue
			}
			p.Text, placed = content, true
		}
		out = append(out, p)
	}
	if !placed {
		out = append(out, llm.Part{Kind: llm.KindText, Text: content})
	}
	return out, true
}

// Decode splits the answer's <think> blocks off its text. See thinkTags.
func (d thinkTags) Decode(r io.Reader, stream bool) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		var f thinktag.Filter
		sent := 0 // bytes of f.Reasoning() already yielded
		// flush yields what the filter decided since the last call, reasoning first.
		flush := func(visible string) bool {
			if r := f.Reasoning(); len(r) > sent {
				if !yield(llm.Event{Kind: llm.EventReasoning, Text: r[sent:]}, nil) {
					return false
				}
				sent = len(r)
			}
			return visible == "" || yield(llm.Event{Kind: llm.EventText, Text: visible}, nil)
		}
		for ev, err := range d.Dialect.Decode(r, stream) {
			if err != nil {
				yield(ev, err)
				return
			}
			switch ev.Kind {
			case llm.EventText:
				if !flush(f.Write(ev.Text)) {
					return
				}
				continue
			case llm.EventDone:
				if !flush(f.Close()) {
					return
				}
				if ev.Message != nil {
					ev.Message = splitThinkTags(ev.Message)
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// splitThinkTags returns m with its text split into a reasoning part, which keeps the content
// as sent in Raw, and the visible text; m itself when the text has no reasoning tags.
func splitThinkTags(m *llm.Message) *llm.Message {
	content := m.Text()
	visible, reasoning := thinktag.Split(content)
	if visible == content {
		return m
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return m // a string always marshals
	}
	out := &llm.Message{Role: m.Role, Parts: make([]llm.Part, 0, len(m.Parts)+1)}
	placed := false
	for _, p := range m.Parts {
		if p.Kind == llm.KindText {
			if placed {
				continue
			}
			placed = true
			out.Parts = append(out.Parts, llm.Part{Kind: llm.KindReasoning, Text: reasoning, Raw: raw, Dialect: thinkTagDialect})
			if visible == "" {
				continue
			}
			p.Text = visible
		}
		out.Parts = append(out.Parts, p)
	}
	return out
}
