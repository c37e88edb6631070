// Package exposure decides what a model sees of the catalog — every tool, discovery, or Tool Search —
// and gives each session a view whose calls all go through the dispatch pipeline.
package exposure

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// Mode is how the catalog is exposed.
type Mode string

const (
	Direct          Mode = "direct"
	Discovery       Mode = "discovery"
	ToolSearchTools Mode = "toolsearch-tools"
	ToolSearchCode  Mode = "toolsearch-code"
)

// Modes lists every mode, for flag validation.
var Modes = []Mode{Direct, Discovery, ToolSearchTools, ToolSearchCode}

// ParseMode validates a mode name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("mode: must be one of direct, discovery, toolsearch-tools, toolsearch-code")
}

// Resolve picks the mode: Tool Search, when enabled, wins over discovery; code mode falls back to
// tools mode when the sandbox cannot start.
func Resolve(toolSearchEnabled bool, toolSearchMode string, discoveryMode discovery.Mode, codeAvailable bool) Mode {
	if toolSearchEnabled {
		if toolSearchMode == "tools" || !codeAvailable {
			return ToolSearchTools
		}
		return ToolSearchCode
	}
	if discoveryMode == discovery.All || discoveryMode == discovery.MCPOnly {
		return Discovery
	}
	return Direct
}

// Controls supplies the control tools of a Tool Search mode (tool_search, tool_describe, tool_call,
// or tool_search_code) for one run over snap. It is called per view snapshot; it must be cheap.
type Controls func(mode Mode, snap *catalog.Snapshot, session string) []catalog.Entry

// Engine serves views of the live catalog. Its fields are set at assembly; it is then safe for
// concurrent use.
type Engine struct {
	mode      atomic.Value // Mode; see Mode and SetMode
	Catalog   *catalog.Catalog
	Pipeline  *dispatch.Pipeline
	Discovery *discovery.Service // required in Discovery mode
	Controls  Controls           // required in Tool Search modes
	Log       *slog.Logger       // nil: quiet
	// Askers, if set, receives the approval asker of a session whose client can be asked
	// (MCP elicitation).
	Askers SessionAskers
	// Ready, if set, waits (bounded by ctx) until sources that are still starting have listed
	// their tools; a listing kept from an earlier run counts. Searches wait for it so that a
	// model's first search right after start-up does not miss the tools of a server that is still
	// connecting, and so does a call to a name that is not there yet. A session's first tool
	// list waits for it too, but only until ListWait after the first such list: a client that
	// lists once, right after initialize, sees the servers' tools.
	Ready func(ctx context.Context)
	// ListWait bounds the first tool lists' wait for Ready; 0 means DefaultListWait.
	ListWait time.Duration
	// ToolMeta, if set, returns the _meta an MCP client sees on a listed tool, or nil: tools
	// listed from a server's cached manifest are marked until it has connected.
	ToolMeta func(t *catalog.Tool) map[string]any

	mu   sync.Mutex
	subs map[string]map[int]func()
	next int

	allowedMu   sync.Mutex
	allowedFrom *catalog.Snapshot // the catalog snapshot allowed was filtered from
	allowed     *catalog.Snapshot

	listOnce sync.Once
	listBy   time.Time // set by listOnce: first lists wait for Ready until then
}

// DefaultListWait is how long the first tool lists after start-up wait for sources that are
// still starting and have no cached listing. It is short: a server slower than that still
// arrives, with notifications/tools/list_changed, and is listed from its cache on the next run.
const DefaultListWait = 5 * time.Second

// listDeadline is when first tool lists stop waiting for Ready: ListWait after the first one.
func (e *Engine) listDeadline() time.Time {
	e.listOnce.Do(func() {
		w := e.ListWait
		if w <= 0 {
			w = DefaultListWait
		}
		e.listBy = time.Now().Add(w)
	})
	return e.listBy
}

// Mode is the engine's current exposure mode.
func (e *Engine) Mode() Mode {
	m, _ := e.mode.Load().(Mode)
	if m == "" {
		return Direct
	}
	return m
}

// SetMode changes the exposure mode (auto discovery switches on when servers connect late) and
// tells every view.
func (e *Engine) SetMode(m Mode) {
	if old := e.Mode(); old != m {
		e.mode.Store(m)
		e.Notify("")
	}
}

// Allowed is the current catalog snapshot without the tools policy denies: denied tools are never
// listed, found or called.
//
// The policy is fixed once assembled, so the filtered snapshot is computed once per catalog
// snapshot, not on every call.
func (e *Engine) Allowed() *catalog.Snapshot {
	snap := e.Catalog.Snapshot()
	if e.Pipeline == nil || e.Pipeline.Policy == nil {
		return snap
	}
	e.allowedMu.Lock()
	defer e.allowedMu.Unlock()
	if e.allowedFrom != snap {
		e.allowed, e.allowedFrom = snap.Filter(e.Pipeline.Policy.Allowed), snap
	}
	return e.allowed
}

// Run returns the snapshot of what a session can call now: the visible tools plus the control
// tools of the mode. In Tool Search modes the control tools are all a session calls directly;
// tool_call reaches every allowed tool through the runtime Controls was given.
func (e *Engine) Run(ctx context.Context, session string) (run *catalog.Snapshot, visible []catalog.Tool, err error) {
	allowed := e.Allowed()
	mode := e.Mode()
	switch mode {
	case Discovery:
		vis, corpus, err := e.Discovery.Split(ctx, allowed, session)
		if err != nil {
			return nil, nil, err
		}
		search := e.Discovery.Tool(e.Allowed)
		search.Tool.Description = discovery.DescribeCorpus(corpus)
		entries := make([]catalog.Entry, 0, len(vis)+1)
		for _, v := range vis {
			entries = append(entries, *v)
		}
		entries = append(entries, search)
		run, err = catalog.NewSnapshot(allowed.Version(), entries)
		if err != nil {
			return nil, nil, err
		}
		for _, en := range run.Entries() {
			visible = append(visible, en.Tool)
		}
		return run, visible, nil
	case ToolSearchTools, ToolSearchCode:
		ctrl := e.Controls(mode, allowed, session)
		run, err = controlRun(allowed, ctrl)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range ctrl {
			visible = append(visible, c.Tool)
		}
		return run, visible, nil
	default:
		for _, en := range allowed.Entries() {
			visible = append(visible, en.Tool)
		}
		return allowed, visible, nil
	}
}

// controlRun is the run of a Tool Search mode: just its control tools, since View.Call lets a
// session call nothing else. Every list and call builds one, so it does not copy the whole
// catalog; only when a control tool shares an id or name with an allowed tool does it build the
// merged snapshot, which reports the clash.
func controlRun(allowed *catalog.Snapshot, ctrl []catalog.Entry) (*catalog.Snapshot, error) {
	for _, c := range ctrl {
		_, idTaken := allowed.Lookup(c.Tool.ID)
		_, nameTaken := allowed.Lookup(c.Tool.Name)
		if idTaken || nameTaken {
			return allowed.With(ctrl)
		}
	}
	return catalog.NewSnapshot(allowed.Version(), ctrl)
}

// Open returns the view of one session. The caller closes it.
func (e *Engine) Open(_ context.Context, session string) (*View, error) {
	return &View{e: e, session: session}, nil
}

// Notify tells the views of session (all sessions when empty) that their tool list changed.
func (e *Engine) Notify(session string) {
	e.mu.Lock()
	var fns []func()
	for s, m := range e.subs {
		if session == "" || s == session {
			for _, fn := range m {
				fns = append(fns, fn)
			}
		}
	}
	e.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func (e *Engine) subscribe(session string, fn func()) func() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.subs == nil {
		e.subs = map[string]map[int]func(){}
	}
	if e.subs[session] == nil {
		e.subs[session] = map[int]func(){}
	}
	id := e.next
	e.next++
	e.subs[session][id] = fn
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		delete(e.subs[session], id)
		if len(e.subs[session]) == 0 {
			delete(e.subs, session)
		}
	}
}

// View is one session's window on the catalog. It is safe for concurrent use.
type View struct {
	e       *Engine
	session string
	listed  atomic.Bool // WaitTools ran once
}

// Session is the view's session id.
func (v *View) Session() string { return v.session }

// Tools returns the tools the session sees now, or none when they cannot be listed (ListTools
// says why).
func (v *View) Tools() []catalog.Tool {
	vis, err := v.ListTools()
	if err != nil {
		if v.e.Log != nil {
			v.e.Log.Error("listing a session's tools failed", "session", v.session, "err", err)
		}
		return nil
	}
	return vis
}

// ListTools is Tools with the error of a listing that failed (the session's discovery
// selections could not be read, a control tool clashes with a catalog tool): an MCP client then
// keeps the list it has, rather than being told that every tool is gone.
func (v *View) ListTools() ([]catalog.Tool, error) {
	_, vis, err := v.e.Run(context.Background(), v.session)
	return vis, err
}

// WaitTools is called before the session's tools are listed to a client. On the first list, in
// the modes that list the catalog's tools (direct and discovery), it waits for sources that are
// still starting and have no cached listing, up to the engine's list deadline or until ctx ends.
func (v *View) WaitTools(ctx context.Context) {
	if v.e.Ready == nil || v.listed.Swap(true) {
		return
	}
	if m := v.e.Mode(); m == ToolSearchTools || m == ToolSearchCode {
		return // the control tools do not depend on the sources
	}
	by := v.e.listDeadline()
	if !time.Now().Before(by) {
		return
	}
	ctx, cancel := context.WithDeadline(ctx, by)
	defer cancel()
	v.e.Ready(ctx)
}

// ToolMeta returns the _meta of a listed tool (see Engine.ToolMeta), or nil.
func (v *View) ToolMeta(t *catalog.Tool) map[string]any {
	if v.e.ToolMeta == nil {
		return nil
	}
	return v.e.ToolMeta(t)
}

// readyWait bounds how long a search, or a call to a name not there yet, waits for sources that
// are still starting.
const readyWait = 15 * time.Second

func (v *View) waitReady(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	v.e.Ready(rctx)
}

// searchTools are the control tools whose answer depends on the whole catalog, by name and by id.
var searchTools = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range []string{discovery.ToolName, "tool_search", "tool_search_code", "tool_call", "tool_describe"} {
		m[name] = true
		m[catalog.ID(catalog.SourceBuiltin, "core", name)] = true
	}
	return m
}()

// Call calls a visible tool (or, in Tool Search modes, a control tool) by name or id, for an
// MCP client.
func (v *View) Call(ctx context.Context, name string, args json.RawMessage) (*catalog.Result, error) {
	return v.CallFrom(ctx, "mcp", name, args)
}

// CallFrom is Call for another surface ("agent" for calls a model makes in a turn), which
// telemetry records.
func (v *View) CallFrom(ctx context.Context, surface, name string, args json.RawMessage) (*catalog.Result, error) {
	if v.e.Ready != nil && searchTools[name] {
		v.waitReady(ctx)
	}
	run, vis, err := v.e.Run(ctx, v.session)
	if err != nil {
		return nil, err
	}
	m := v.e.Mode()
	if _, ok := run.Lookup(name); !ok && v.e.Ready != nil && !searchTools[name] && (m == Direct || m == Discovery) {
		// Maybe a tool of a server that is still connecting and has no cached listing: a client
		// may call a tool it knows right after initialize.
		v.waitReady(ctx)
		if run, vis, err = v.e.Run(ctx, v.session); err != nil {
			return nil, err
		}
		m = v.e.Mode()
	}
	if m == ToolSearchTools || m == ToolSearchCode {
		// Only the control tools are exposed; the rest is reached through them.
		ok := false
		for _, t := range vis {
			if t.Name == name || t.ID == name {
				ok = true
				break
			}
		}
		if !ok {
			return nil, fmt.Errorf("%w: %s", dispatch.ErrUnknownTool, name)
		}
	}
	return v.e.Pipeline.Call(ctx, run, dispatch.Request{Target: name, Args: args, Session: v.session, Surface: surface})
}

// Subscribe calls fn when the view's tool list may have changed.
func (v *View) Subscribe(fn func()) (cancel func()) {
	unsubSession := v.e.subscribe(v.session, fn)
	unwatch := v.e.Catalog.Watch(func(*catalog.Snapshot) { fn() })
	return func() { unsubSession(); unwatch() }
}

// Close releases the view.
func (v *View) Close() error { return nil }
