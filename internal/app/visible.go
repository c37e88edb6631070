package app

import (
	"sync"

	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/thinktag"
)

// visibleText wraps a turn's observer so that faces never show reasoning a model put inside its
// answer as <think> tags: answer deltas go through a tag filter, what it hides is reported as
// reasoning. The transcript keeps the model's text unchanged.
type visibleText struct {
	mu   sync.Mutex
	next func(agent.Event)
	f    thinktag.Filter
	sent int // bytes of f.Reasoning() already reported
}

func (v *visibleText) observe(ev agent.Event) {
	if v.next == nil {
		return
	}
	switch ev.Kind {
	case agent.EventText:
		v.mu.Lock()
		vis := v.f.Write(ev.Text)
		hidden := v.hidden()
		v.mu.Unlock()
		v.emit(hidden, vis)
	case agent.EventStep:
		// A step's answer ends here: what the filter held back is settled.
		v.mu.Lock()
		vis := v.f.Close()
		hidden := v.hidden()
		v.f, v.sent = thinktag.Filter{}, 0
		v.mu.Unlock()
		v.emit(hidden, vis)
		v.next(ev)
	default:
		v.next(ev)
	}
}

func (v *visibleText) hidden() string {
	r := v.f.Reasoning()
	if len(r) < v.sent {
		// Close gave an unclosed block back as the answer (a reply that is only that block):
		// its reasoning, already reported, is gone from the filter.
		v.sent = len(r)
		return ""
	}
	h := r[v.sent:]
	v.sent = len(r)
	return h
}

func (v *visibleText) emit(hidden, vis string) {
	if hidden != "" {
		v.next(agent.Event{Kind: agent.EventReasoning, Text: hidden})
	}
	if vis != "" {
		v.next(agent.Event{Kind: agent.EventText, Text: vis})
	}
}

// visibleResult applies the same rule to the final answer: the shown text without tagged
// reasoning, which joins the message's reasoning parts for /reasoning on.
func visibleResult(res *agent.Result) {
	vis, hidden := thinktag.Split(res.Text)
	if hidden == "" && vis == res.Text {
		return
	}
	res.Text = vis
	msg := res.Message
	parts := append([]llm.Part{{Kind: llm.KindReasoning, Text: hidden}}, msg.Parts...)
	res.Message = llm.Message{Role: msg.Role, Parts: parts}
}
