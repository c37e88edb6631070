package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/directive"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/thinking"
)

// target is the thinking target of a resolved model: the profile's and the payload mapping's input.
func (a *App) target(rm *resolvedModel, maxTokens int, toolChoice string) thinking.Target {
	if rm.prov == nil {
		// The scripted model reasons a little and has a plain three-level menu.
		return thinking.Target{Provider: ScriptedProvider, API: "openai-completions", Model: rm.id, Reasoning: true, Efforts: []string{"low", "medium", "high"}}
	}
	t := thinking.Target{Provider: rm.prov.ID, API: rm.prov.API, Model: rm.id, Direct: rm.prov.Direct, MaxTokens: maxTokens, ToolChoice: toolChoice}
	if m, ok := rm.prov.Model(rm.id); ok {
		t.Reasoning = m.Reasoning != nil && *m.Reasoning
		t.Efforts = m.SupportedReasoningEfforts
	}
	t.Params = a.Config.Agents.Default.ModelParams[rm.ref]
	return t
}

func defaultsOf(s config.AgentSettings, params map[string]any) directive.Defaults {
	d := directive.Defaults{Thinking: s.ThinkingDefault, Verbose: s.VerboseDefault, Trace: s.TraceDefault, Reasoning: s.ReasoningDefault, Params: params}
	if s.FastModeDefault != nil {
		d.Fast = strconv.FormatBool(*s.FastModeDefault)
	}
	return d
}

// layers gathers what a session's levels are resolved from.
func (a *App) layers(agentID string, overrides map[string]string, rm *resolvedModel, t thinking.Target) directive.Layers {
	agentSettings, _ := a.Config.Agents.Agent(agentID)
	return directive.Layers{
		Session: overrides,
		Agent:   defaultsOf(agentSettings, nil),
		Global:  defaultsOf(a.Config.Agents.Default, a.Config.Agents.Default.ModelParams[rm.ref]),
		Profile: thinking.ProfileFor(t),
		// A model the profile table does not know reasons when its config says so.
		Reasoning: t.Reasoning,
		Model:     rm.ref,
	}
}

// storedSession reads a session's row; nil for a session that does not exist yet.
func (a *App) storedSession(ctx context.Context, key string) (*session.Info, error) {
	info, err := a.Store.Session(ctx, key)
	if errors.Is(err, session.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session %q: %w", key, err)
	}
	return info, nil
}

// lastUserText returns the index and text of the input's last message when a user wrote it
// (directives in its text count even beside images).
func lastUserText(in []llm.Message) (int, string, bool) {
	if len(in) == 0 || in[len(in)-1].Role != llm.RoleUser {
		return 0, "", false
	}
	i := len(in) - 1
	return i, in[i].Text(), true
}

// withBody replaces the text of a user message with the directive-free body, keeping its other parts.
func withBody(m llm.Message, body string) llm.Message {
	out := llm.Message{Role: m.Role}
	placed := false
	for _, p := range m.Parts {
		if p.Kind == llm.KindText {
			if !placed && body != "" {
				out.Parts = append(out.Parts, llm.Part{Kind: llm.KindText, Text: body})
			}
			placed = true
			continue
		}
		out.Parts = append(out.Parts, p)
	}
	if !placed && body != "" {
		out.Parts = append(out.Parts, llm.Part{Kind: llm.KindText, Text: body})
	}
	return out
}

// levelsFor resolves a turn's levels and the request patches they make: patch for its model
// calls, and under /fast auto fast for the calls that start within the window of
// thinking.FastAutoWindow (nil otherwise).
func (a *App) levelsFor(l directive.Layers, t thinking.Target) (r directive.Resolved, patch llm.Patch, fast *llm.Patch, err error) {
	r = directive.Resolve(l)
	patch, err = thinking.Map(t, r.Think, r.Fast == thinking.FastOn)
	if err == nil && r.Fast == thinking.FastAuto {
		var p llm.Patch
		p, err = thinking.Map(t, r.Think, true)
		fast = &p
	}
	if err != nil {
		return r, llm.Patch{}, nil, fmt.Errorf("model %q: %w", l.Model, err)
	}
	return r, patch, fast, nil
}

// ToolProgressDetail is agents.list[].toolProgressDetail, else agents.defaults', else "explain".
func (a *App) ToolProgressDetail(agentID string) string {
	if s, ok := a.Config.Agents.Agent(agentID); ok && s.ToolProgressDetail != "" {
		return s.ToolProgressDetail
	}
	if d := a.Config.Agents.Default.ToolProgressDetail; d != "" {
		return d
	}
	return "explain"
}

// DefaultHeartbeatPrompt is the documented heartbeat probe body.
const DefaultHeartbeatPrompt = "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. Do not infer or repeat old tasks from prior chats. If nothing needs attention, reply HEARTBEAT_OK."

// HeartbeatPrompt is agents.list[].heartbeat.prompt, else agents.defaults', else the documented one.
func (a *App) HeartbeatPrompt(agentID string) string {
	if s, ok := a.Config.Agents.Agent(agentID); ok && s.HeartbeatPrompt != "" {
		return s.HeartbeatPrompt
	}
	if p := a.Config.Agents.Default.HeartbeatPrompt; p != "" {
		return p
	}
	return DefaultHeartbeatPrompt
}

// heartbeatReasoning is heartbeat.includeReasoning: the agent's, else the defaults', else false.
func (a *App) heartbeatReasoning(agentID string) bool {
	if s, ok := a.Config.Agents.Agent(agentID); ok && s.HeartbeatReasoning != nil {
		return *s.HeartbeatReasoning
	}
	if b := a.Config.Agents.Default.HeartbeatReasoning; b != nil {
		return *b
	}
	return false
}
