package app

import (
	"context"
	"fmt"
	"sync"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/policy"
	"github.com/nodmix/nodmix/internal/telemetry"
	"github.com/nodmix/nodmix/internal/toolsearch"
)

// discoveryToolID is the id of search_tool_bm25, the one control tool toolsearch does not know.
var discoveryToolID = catalog.ID(catalog.SourceBuiltin, "core", discovery.ToolName)

// controlTool reports the Tool Search and discovery control tools: their target calls are gated
// themselves, so approvals and hooks do not hold the control call.
func controlTool(t *catalog.Tool) bool {
	return toolsearch.IsControlTool(t) || t.ID == discoveryToolID
}

// addPolicy installs allow/deny rules, approvals, before-call hooks and telemetry on the pipeline.
func (a *App) addPolicy() error {
	cfg := a.Config.Tools
	rules := policy.Rules{Allow: cfg.Allow, Deny: cfg.Deny}
	if err := rules.Validate(); err != nil {
		return err
	}
	a.Pipeline.Policy = controlsAllowed{rules}
	if len(cfg.Approval.Require) > 0 {
		gate, err := policy.NewApprovalGate(policy.ApprovalConfig{
			Require: cfg.Approval.Require,
			Asker:   &a.askers,
			Exempt:  controlTool,
			Log:     a.Log,
		})
		if err != nil {
			return err
		}
		a.Pipeline.Gates = append(a.Pipeline.Gates, gate)
	}
	if len(cfg.Hooks.BeforeCall) > 0 {
		hooks := make([]policy.Hook, len(cfg.Hooks.BeforeCall))
		for i, h := range cfg.Hooks.BeforeCall {
			hooks[i] = policy.Hook{Command: h.Command, Tools: h.Tools, Timeout: h.Timeout}
		}
		// A hook sees every call's arguments; it does not need nodmix's keys as well.
		gate, err := policy.NewHookGate(policy.HookConfig{Hooks: hooks, Exempt: controlTool, Log: a.Log, Env: environWithout(a.withheldEnv())})
		if err != nil {
			return err
		}
		a.Pipeline.Gates = append(a.Pipeline.Gates, gate)
	}
	a.Telemetry = telemetry.New(a.logDir, a.Log)
	a.addCloser(a.Telemetry.Close)
	a.Pipeline.Observers = append(a.Pipeline.Observers, a.Telemetry)
	return nil
}

// controlsAllowed lets an allow list name only real tools: the discovery and Tool Search control
// tools stay available (the calls they make are checked themselves) unless a deny rule names them.
type controlsAllowed struct{ rules policy.Rules }

func (c controlsAllowed) Allowed(t *catalog.Tool) bool {
	if controlTool(t) {
		return policy.Rules{Deny: c.rules.Deny}.Allowed(t)
	}
	return c.rules.Allowed(t)
}

var _ dispatch.Policy = controlsAllowed{}

// bothAllowed allows what both policies allow: an agent's rules narrow the app's.
type bothAllowed struct{ outer, inner dispatch.Policy }

func (b bothAllowed) Allowed(t *catalog.Tool) bool { return b.outer.Allowed(t) && b.inner.Allowed(t) }

var _ dispatch.Policy = bothAllowed{}

// engineFor returns the exposure engine agentID's runs see and call through: the app's own,
// unless agents.list[].tools.allow / deny narrow what tools.allow / deny permit. Then it is an
// engine of its own over the same catalog, pipeline gates and mode, whose policy both rules
// pass, so the agent's model neither sees nor reaches (by name, search or tool_call) what its
// rules leave out. Engines are built on first use and kept: the rules do not change while the
// app runs.
func (a *App) engineFor(agentID string) *exposure.Engine {
	s, ok := a.Config.Agents.Agent(agentID)
	if !ok || (len(s.Allow) == 0 && len(s.Deny) == 0) {
		return a.Engine
	}
	st := &a.agents
	st.enginesMu.Lock()
	defer st.enginesMu.Unlock()
	if e, ok := st.engines[agentID]; ok {
		return e
	}
	p := *a.Pipeline // assembled by now; the copy shares its gates, middleware and observers
	p.Policy = bothAllowed{a.Pipeline.Policy, controlsAllowed{policy.Rules{Allow: s.Allow, Deny: s.Deny}}}
	g := a.Engine
	e := &exposure.Engine{Catalog: g.Catalog, Pipeline: &p, Discovery: g.Discovery, Controls: g.Controls, Log: g.Log,
		Askers: g.Askers, Ready: g.Ready, ListWait: g.ListWait, ToolMeta: g.ToolMeta}
	e.SetMode(g.Mode())
	if st.engines == nil {
		st.engines = map[string]*exposure.Engine{}
	}
	st.engines[agentID] = e
	return e
}

// SetAsker sets who is asked for approvals when no session-specific asker is registered (the CLI
// sets its terminal).
func (a *App) SetAsker(asker policy.Asker) { a.askers.setDefault(asker) }

// SetSessionAsker registers the asker of one session (an MCP client that supports elicitation);
// the returned function removes it.
func (a *App) SetSessionAsker(session string, asker policy.Asker) (remove func()) {
	return a.askers.set(session, asker)
}

// askerRouter sends an approval request to the asker of its session, else to the default one.
type askerRouter struct {
	mu        sync.Mutex
	def       policy.Asker
	bySession map[string]*sessionAsker
}

// sessionAsker is one registration: its removal must not drop a later one of the same session
// (a client that reattaches under its session id before the old binding is torn down).
type sessionAsker struct{ policy.Asker }

var _ policy.Asker = (*askerRouter)(nil)

func (r *askerRouter) setDefault(a policy.Asker) {
	r.mu.Lock()
	r.def = a
	r.mu.Unlock()
}

func (r *askerRouter) set(session string, a policy.Asker) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bySession == nil {
		r.bySession = map[string]*sessionAsker{}
	}
	reg := &sessionAsker{a}
	r.bySession[session] = reg
	return func() {
		r.mu.Lock()
		if r.bySession[session] == reg {
			delete(r.bySession, session)
		}
		r.mu.Unlock()
	}
}

// Ask implements policy.Asker.
func (r *askerRouter) Ask(ctx context.Context, req policy.ApprovalRequest) (policy.Decision, error) {
	r.mu.Lock()
	var a policy.Asker = r.def
	if reg, ok := r.bySession[req.Session]; ok {
		a = reg.Asker
	}
	r.mu.Unlock()
	if a == nil {
		return policy.Decision{}, fmt.Errorf("%w: nobody is attached to approve calls in this session", policy.ErrCannotAsk)
	}
	return a.Ask(ctx, req)
}
