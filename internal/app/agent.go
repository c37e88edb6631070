package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/directive"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/provider"
	"github.com/nodmix/nodmix/internal/scripted"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/thinking"
)

// ScriptedProvider is the provider id of the bundled scripted model (`scripted/demo`), which
// needs no account: `make demo` and first runs use it to show the turn loop.
const ScriptedProvider = "scripted"

// agentState is built on first use: commands that run no agent never build providers.
type agentState struct {
	once      sync.Once
	providers *provider.Registry
	err       error

	directMu   sync.Mutex
	directFrom *catalog.Snapshot
	directSize int

	enginesMu sync.Mutex
	engines   map[string]*exposure.Engine // by agent id: agents whose tools rules narrow the catalog
}

// Providers is the provider registry of the config.
func (a *App) Providers() (*provider.Registry, error) {
	a.agents.once.Do(func() {
		client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		a.agents.providers, a.agents.err = provider.New(a.Config, provider.Options{HTTP: client, LookupEnv: a.lookupEnv, Log: a.Log})
		// Kept-alive connections to providers end with the app.
		a.addCloser(func() error { client.CloseIdleConnections(); return nil })
	})
	return a.agents.providers, a.agents.err
}

// TurnRequest is one turn as a face asks for it.
type TurnRequest struct {
	Session string
	// Ephemeral runs the turn on a transcript that is not kept (a stateless API call).
	Ephemeral bool
	// Heartbeat marks a heartbeat probe: its directives apply to it but never change the
	// session's defaults, and its reasoning is delivered only with heartbeat.includeReasoning.
	Heartbeat bool
	// Conversation says Input is the client's whole conversation (OpenAI clients resend it every
	// time): for a session that already has a transcript, only what follows the conversation's
	// last assistant message is new.
	Conversation bool
	Agent        string // agents.list[].id; "" for the defaults
	Model        string // "provider/model"; "" resolves (session, agent, defaults)
	System       string
	Input        []llm.Message
	// ClientTools become client:client:<name> tools of this turn.
	ClientTools []llm.Tool
	Stream      bool
	MaxTokens   int
	Temperature *float64
	ToolChoice  string
	// Extra are request fields a client sent that nodmix does not model, in the wire format of
	// ExtraAPI ("openai-completions" or "openai-responses"); they reach only a provider that
	// speaks that format (another provider would refuse them).
	Extra    map[string]json.RawMessage
	ExtraAPI string
	Observe  func(agent.Event)
	// Levels, if set, is called with the turn's resolved levels before the model is called, so a
	// face can shape what it streams (/reasoning, /verbose).
	Levels func(directive.Resolved)
	// Planned, if set, is called with the "provider/model" the turn runs (asked for, pinned to
	// the session, or the default) just before Levels, so a face can name it in what it streams.
	Planned func(model string)
}

// ErrNoModel: no model was asked for and none is configured.
var ErrNoModel = errors.New("no model configured")

// modelRef resolves which model a turn uses: the request's, the session's pinned one, the
// agent's, then agents.defaults.model.
func (a *App) modelRef(req TurnRequest, stored *session.Info) (string, error) {
	if req.Model != "" {
		return req.Model, nil
	}
	if stored != nil && stored.Model != "" {
		return stored.Model, nil
	}
	if s, ok := a.Config.Agents.Agent(req.Agent); ok && s.Model != "" {
		return s.Model, nil
	}
	if m := a.Config.Agents.Default.Model; m != "" {
		return m, nil
	}
	return "", fmt.Errorf("%w: set agents.defaults.model (for example openai/gpt-5.2) and the provider's key (%s), or pass a model; %s/demo needs no key",
		ErrNoModel, strings.Join(keyVars(), ", "), ScriptedProvider)
}

func keyVars() []string {
	v := provider.KeyEnvs()
	slices.Sort(v)
	return v
}

// resolvedModel is a turn's model: how to stream from it and how to name it.
type resolvedModel struct {
	ref   string
	id    string
	model agent.Model
	prov  *provider.Provider // nil for the scripted model
	patch llm.Patch
	// Under /fast auto, the model calls that start before fastUntil send fast instead of
	// patch; fastUntil is the run's start plus fastWindow, set by startRun.
	fast       *llm.Patch
	fastWindow time.Duration
	fastUntil  time.Time
	now        func() time.Time
}

// startRun marks the start of the turn's run, from which /fast auto counts its window.
func (rm *resolvedModel) startRun() {
	if rm.fast != nil {
		rm.fastUntil = rm.now().Add(rm.fastWindow)
	}
}

// callPatch is the patch of a model call that starts now.
func (rm *resolvedModel) callPatch() llm.Patch {
	if rm.fast != nil && rm.now().Before(rm.fastUntil) {
		return *rm.fast
	}
	return rm.patch
}

func (a *App) resolveModel(ref string) (*resolvedModel, error) {
	if id, ok := strings.CutPrefix(ref, ScriptedProvider+"/"); ok {
		return &resolvedModel{ref: ref, id: id, model: scripted.Model{}, now: a.clock()}, nil
	}
	reg, err := a.Providers()
	if err != nil {
		return nil, err
	}
	p, id, err := reg.Resolve(ref)
	if err != nil {
		return nil, err
	}
	rm := &resolvedModel{ref: ref, id: id, prov: p, now: a.clock()}
	rm.model = providerModel{rm}
	return rm, nil
}

// providerModel streams from a provider with the patch of the turn's call.
type providerModel struct{ rm *resolvedModel }

func (m providerModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return m.rm.prov.Stream(ctx, req, m.rm.callPatch())
}

// CheckRequest implements agent.RequestChecker: the turn loop refuses input the provider's wire
// format cannot carry before storing it.
func (m providerModel) CheckRequest(req *llm.Request) error {
	return m.rm.prov.Check(req, m.rm.callPatch())
}

var _ agent.RequestChecker = providerModel{}

// agentTools is the exposure engine as the turn loop sees it: calls come from surface "agent".
type agentTools struct{ e *exposure.Engine }

var _ agent.Tools = agentTools{}

func (t agentTools) Tools(ctx context.Context, sess string) ([]catalog.Tool, error) {
	_, vis, err := t.e.Run(ctx, sess)
	return vis, err
}

func (t agentTools) Call(ctx context.Context, sess, name string, args json.RawMessage) (*catalog.Result, error) {
	v, err := t.e.Open(ctx, sess)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	return v.CallFrom(ctx, "agent", name, args)
}

// runner is the turn loop of agentID's runs over this app's store, tools and telemetry.
func (a *App) runner(agentID string) *agent.Runner {
	e := a.engineFor(agentID)
	return &agent.Runner{
		Sessions: a.Store,
		Tools:    agentTools{e},
		Allowed:  e.Pipeline.Policy.Allowed,
		Log:      a.Telemetry.Write,
		Logger:   a.Log,
	}
}

// TurnResult is a turn's outcome as faces show it.
type TurnResult struct {
	agent.Result
	// Levels are the levels the turn ran with (or, for a directive-only message, the session's
	// levels after it), for faces that shape their output by /verbose, /reasoning and /trace.
	Levels directive.Resolved
	// Directive is set for a directive-only message: Text is the reply and no model was called.
	Directive bool
	// Notice tells the user that a stored level was remapped for this model ("" when not).
	Notice string
}

// plan is a turn ready to run: its model, its request settings and its levels.
type plan struct {
	agent string // the agent the turn runs as ("" for the defaults)
	// keepAgent: the turn names an agent and the session records none yet, so the turn records it
	// (one store write then, not one per turn).
	keepAgent bool
	turn      agent.Turn
	rm        *resolvedModel
	levels    directive.Resolved
	notice    string
}

// plan resolves a turn's model and levels. A directive-only user message (/think high) is
// answered instead (the returned TurnResult), changing the session's overrides unless dryRun;
// inline directives apply to their message only and are removed from what the model reads.
func (a *App) plan(ctx context.Context, req TurnRequest, dryRun bool) (*plan, *TurnResult, error) {
	if err := session.CheckKey(req.Session); err != nil {
		return nil, nil, err
	}
	// The session's row is read once: its pinned model, agent, overrides and length.
	var stored *session.Info
	if !req.Ephemeral {
		var err error
		if stored, err = a.storedSession(ctx, req.Session); err != nil {
			return nil, nil, err
		}
	}
	keepAgent := req.Agent != "" && !req.Ephemeral && (stored == nil || stored.Agent == "")
	if req.Agent == "" && stored != nil {
		// The session's agent decides all its agent does: model, levels, step limit.
		req.Agent = stored.Agent
	}
	ref, err := a.modelRef(req, stored)
	if err != nil {
		return nil, nil, err
	}
	rm, err := a.resolveModel(ref)
	if err != nil {
		return nil, nil, err
	}
	var overrides map[string]string
	agentID := req.Agent
	if stored != nil {
		overrides = stored.Overrides
		if req.Conversation && stored.Messages > 0 {
			req.Input = afterLastAssistant(req.Input)
		}
	}
	t := a.agentTurn(req, rm)
	tgt := a.target(rm, t.MaxTokens, req.ToolChoice)
	l := a.layers(agentID, overrides, rm, tgt)
	if i, text, ok := lastUserText(t.Input); ok {
		parsed := directive.Parse(text)
		if parsed.Only {
			res, err := a.applyDirectives(ctx, req, l, parsed.Directives, dryRun || req.Heartbeat)
			return nil, res, err
		}
		if len(parsed.Directives) > 0 {
			if reply, ok := directive.Check(parsed.Directives, l); !ok {
				return nil, &TurnResult{Result: agent.Result{Model: ref, Text: reply, Finish: "directive"}, Directive: true, Levels: directive.Resolve(l)}, nil
			}
			l.Inline = parsed.Directives
			in := append([]llm.Message(nil), t.Input...)
			in[i] = withBody(in[i], parsed.Body)
			t.Input = in
		}
	}
	levels, patch, fast, err := a.levelsFor(l, tgt)
	if err != nil {
		return nil, nil, err
	}
	rm.patch, rm.fast = patch, fast
	if fast != nil {
		rm.fastWindow = thinking.FastAutoWindow(a.Config.Agents.Default.ModelParams[rm.ref])
	}
	if req.Heartbeat {
		levels.Reasoning = "off"
		if a.heartbeatReasoning(agentID) {
			levels.Reasoning = "on"
		}
	}
	notice, _ := directive.RemapNotice(l)
	return &plan{agent: agentID, keepAgent: keepAgent, turn: t, rm: rm, levels: levels, notice: notice}, nil, nil
}

// Turn runs one turn (see plan for directives).
func (a *App) Turn(ctx context.Context, req TurnRequest) (*TurnResult, error) {
	p, early, err := a.plan(ctx, req, false)
	if err != nil || early != nil {
		return early, err
	}
	if req.Planned != nil {
		req.Planned(p.rm.ref)
	}
	if req.Levels != nil {
		req.Levels(p.levels)
	}
	// A turn right after start-up must see the tools of servers that are still connecting, as a
	// search does; the wait is bounded and costs nothing once they have connected.
	wctx, cancel := context.WithTimeout(ctx, serverWait)
	a.serversListed(wctx) // servers listed from a cached manifest do not hold a turn up
	cancel()
	r := a.runner(p.agent)
	if req.Ephemeral {
		r.Sessions = session.NewMemory()
		// A log file of its own would outlive the session and pile up with the others.
		defer a.Telemetry.Stateless(req.Session)()
	}
	t := p.turn
	vt := &visibleText{next: t.Observe}
	if t.Observe != nil {
		t.Observe = vt.observe
	}
	p.rm.startRun()
	res, err := r.Run(ctx, t)
	// A turn refused as busy ran nothing: the session is another turn's, which may run as
	// another agent.
	if p.keepAgent && !errors.Is(err, agent.ErrBusy) {
		a.keepAgent(ctx, req.Session, p.agent)
	}
	out := &TurnResult{Levels: p.levels, Notice: p.notice}
	if res != nil {
		visibleResult(res)
		out.Result = *res
	}
	return out, err
}

// keepAgentTimeout bounds keepAgent's write, made after the turn's context may have ended.
const keepAgentTimeout = 10 * time.Second

// errNoChange leaves a session row as it is.
var errNoChange = errors.New("no change")

// keepAgent records the agent a session ran as, as a directive-only message does, unless the
// session has one already or was not stored (its input refused): its row and its next turns
// without --agent resolve as that agent.
func (a *App) keepAgent(ctx context.Context, key, agentID string) {
	// The turn's writes are kept even when it was cancelled; so is this one.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keepAgentTimeout)
	defer cancel()
	_, err := a.Store.Update(ctx, key, func(in *session.Info) error {
		if in.Created.IsZero() || in.Agent != "" {
			return errNoChange
		}
		in.Agent = agentID
		return nil
	})
	if err != nil && !errors.Is(err, errNoChange) {
		a.Log.Warn("session: keep its agent", "session", key, "err", err)
	}
}

// applyDirectives answers a directive-only message: the session's overrides change in one
// store transaction (none for a session that is not kept) and the reply says what changed.
func (a *App) applyDirectives(ctx context.Context, req TurnRequest, l directive.Layers, ds []directive.D, dryRun bool) (*TurnResult, error) {
	var res directive.Result
	if req.Ephemeral || dryRun {
		res = directive.Apply(ds, l)
	} else {
		_, err := a.Store.Update(ctx, req.Session, func(in *session.Info) error {
			l.Session = in.Overrides
			res = directive.Apply(ds, l)
			if res.Changed {
				in.Overrides = res.Overrides
			}
			if req.Agent != "" && in.Agent == "" {
				in.Agent = req.Agent
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("session %q: %w", req.Session, err)
		}
	}
	l.Session = res.Overrides
	return &TurnResult{Result: agent.Result{Model: l.Model, Text: res.Reply, Finish: "directive"}, Directive: true, Levels: directive.Resolve(l)}, nil
}

func (a *App) agentTurn(req TurnRequest, rm *resolvedModel) agent.Turn {
	maxTokens := req.MaxTokens
	if maxTokens == 0 && rm.prov != nil {
		if m, ok := rm.prov.Model(rm.id); ok {
			maxTokens = m.MaxTokens
		}
	}
	extra := req.Extra
	if rm.prov == nil || rm.prov.API != req.ExtraAPI {
		extra = nil
	}
	steps, stepsKey := a.Config.Agents.MaxSteps(req.Agent)
	return agent.Turn{
		Session: req.Session, ModelRef: rm.ref, Model: rm.model, ModelID: rm.id, System: req.System,
		Input: req.Input, ClientTools: req.ClientTools, MaxSteps: steps, MaxStepsKey: stepsKey,
		MaxTokens: maxTokens, Temperature: req.Temperature, ToolChoice: req.ToolChoice, Extra: extra,
		Stream: req.Stream, Observe: req.Observe, DirectSchemaBytes: a.directSchemaBytes(),
	}
}

// DryRun is the provider request the first step of a turn would send, without sending it or
// writing anything.
type DryRun struct {
	Provider string            `json:"provider"`
	Model    string            `json:"model"`
	URL      string            `json:"url"`
	Method   string            `json:"method"`
	Headers  map[string]string `json:"headers"` // canonical names; credentials masked
	Body     json.RawMessage   `json:"body"`
}

// Prepare builds a turn's first provider request as DryRun (secrets masked), sending nothing and
// writing nothing. A directive-only message gets its reply instead (reply non-empty).
func (a *App) Prepare(ctx context.Context, req TurnRequest) (dr *DryRun, reply string, err error) {
	p, early, err := a.plan(ctx, req, true)
	if err != nil {
		return nil, "", err
	}
	if early != nil {
		return nil, early.Text, nil
	}
	if p.rm.prov == nil {
		return nil, "", fmt.Errorf("model %q: the scripted model runs in-process and sends no request", p.rm.ref)
	}
	// The request is built as the run builds it (the session's unanswered calls closed, a
	// retried question once, policy on client tools), from what the run would read.
	r := a.runner(p.agent)
	if req.Ephemeral {
		r.Sessions = session.NewMemory()
	}
	lr, err := r.FirstRequest(ctx, p.turn)
	if err != nil {
		return nil, "", err
	}
	p.rm.startRun() // the request a run starting now would send first
	pr, err := p.rm.prov.Prepare(lr, p.rm.callPatch())
	if err != nil {
		return nil, "", err
	}
	headers := map[string]string{}
	for k, v := range pr.MaskedHeader() {
		headers[k] = strings.Join(v, ", ")
	}
	return &DryRun{Provider: pr.Provider, Model: pr.Model, URL: pr.URL, Method: pr.Method, Headers: headers, Body: pr.Body}, "", nil
}

// directSchemaBytes is what direct exposure would send up front for the allowed catalog, for the
// token economy; computed once per catalog snapshot.
func (a *App) directSchemaBytes() int {
	snap := a.Engine.Allowed()
	a.agents.directMu.Lock()
	defer a.agents.directMu.Unlock()
	if a.agents.directFrom != snap {
		tools := make([]catalog.Tool, 0, snap.Len())
		for _, e := range snap.Entries() {
			tools = append(tools, e.Tool)
		}
		b, _ := json.Marshal(exposure.Definitions(tools))
		a.agents.directFrom, a.agents.directSize = snap, len(b)
	}
	return a.agents.directSize
}

// ModelRow is one model GET /v1/models lists.
type ModelRow struct {
	Ref      string `json:"id"`
	Provider string `json:"owned_by"`
	Name     string `json:"name,omitempty"`
	// The model's thinking profile, as menus and validation use it.
	ThinkingLevels  []thinking.Option `json:"thinkingLevels"`
	ThinkingOptions []string          `json:"thinkingOptions"`
	ThinkingDefault string            `json:"thinkingDefault,omitempty"`
}

// Models lists the configured models: models.providers.<id>.models[], the agents' models and
// the scripted demo model, each once.
func (a *App) Models() []ModelRow {
	seen := map[string]bool{}
	var out []ModelRow
	add := func(ref, prov, name string) {
		if ref == "" || seen[ref] {
			return
		}
		seen[ref] = true
		row := ModelRow{Ref: ref, Provider: prov, Name: name, ThinkingLevels: []thinking.Option{}, ThinkingOptions: []string{}}
		if rm, err := a.resolveModel(ref); err == nil {
			p := thinking.ProfileFor(a.target(rm, 0, ""))
			if p.Levels != nil {
				row.ThinkingLevels, row.ThinkingOptions = p.Levels, p.Labels()
			}
			row.ThinkingDefault = string(p.Default)
		}
		out = append(out, row)
	}
	add(a.Config.Agents.Default.Model, providerOf(a.Config.Agents.Default.Model), "")
	for _, s := range a.Config.Agents.Each {
		add(s.Model, providerOf(s.Model), "")
	}
	for _, id := range slices.Sorted(maps.Keys(a.Config.Models.Providers)) {
		for _, m := range a.Config.Models.Providers[id].Models {
			add(id+"/"+m.ID, id, m.Name)
		}
	}
	add(ScriptedProvider+"/demo", ScriptedProvider, "scripted demo model (no account needed)")
	return out
}

func providerOf(ref string) string {
	p, _, _ := strings.Cut(ref, "/")
	return p
}

// afterLastAssistant is the part of a conversation that follows its last assistant message.
func afterLastAssistant(in []llm.Message) []llm.Message {
	for i := len(in) - 1; i >= 0; i-- {
		if in[i].Role == llm.RoleAssistant {
			return in[i+1:]
		}
	}
	return in
}
