package app

import (
	"context"
	"sync"
	"time"
	"weak"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/sandbox"
	"github.com/nodmix/nodmix/internal/toolsearch"
)

// maxRuns bounds the Tool Search runtimes kept for sessions; the oldest is dropped first.
const maxRuns = 4096

// toolSearchState holds Tool Search for every session: one index per catalog version, shared,
// and one runtime (counters, selections) per session and index.
type toolSearchState struct {
	opts    toolsearch.Options
	indexes *toolsearch.IndexCache
	pool    *sandbox.Pool // nil when no sandbox is available

	mu    sync.Mutex
	runs  map[string]*toolsearch.Runtime
	order []string
	// last is the index the newest runtime was made for: when it changes, runtimes bound to
	// indexes the cache has let go of are dropped. It is weak so as not to keep that index itself.
	last weak.Pointer[toolsearch.Index]
}

// toolSearchOptions converts the resolved config.
func toolSearchOptions(ts config.ToolSearch) toolsearch.Options {
	return toolsearch.Options{
		Enabled:            ts.Enabled,
		Mode:               ts.Mode,
		CodeTimeout:        ts.CodeTimeout,
		SearchDefaultLimit: ts.SearchDefaultLimit,
		MaxSearchLimit:     ts.MaxSearchLimit,
	}.Normalize()
}

// startSandbox starts the code-mode sandbox pool and reports whether a child can start here.
func (a *App) startSandbox(ctx context.Context, command []string) bool {
	if command == nil {
		var err error
		if command, err = sandbox.SelfCommand(); err != nil {
			a.Log.Warn("code mode unavailable", "err", err)
			return false
		}
	}
	pool, err := sandbox.NewPool(sandbox.Options{Command: command, Logger: a.Log})
	if err != nil {
		a.Log.Warn("code mode unavailable", "err", err)
		return false
	}
	a.addCloser(pool.Close)
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Available(actx); err != nil {
		a.Log.Warn("code mode unavailable; Tool Search falls back to tools mode", "err", err)
		return false
	}
	a.toolSearch.pool = pool
	return true
}

// ToolSearch returns the Tool Search runtime of a session over the current allowed catalog.
func (a *App) ToolSearch(session string) (*toolsearch.Runtime, error) {
	return a.toolSearchRuntime(a.Engine.Allowed(), session)
}

func (a *App) toolSearchRuntime(snap *catalog.Snapshot, session string) (*toolsearch.Runtime, error) {
	s := &a.toolSearch
	ix, err := s.indexes.Index(snap)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rt, ok := s.runs[session]; ok && rt.Index() == ix {
		return rt, nil
	}
	var runner toolsearch.Runner
	if s.pool != nil {
		runner = s.pool
	}
	rt, err := toolsearch.New(toolsearch.Config{Index: ix, Pipeline: a.Pipeline, Options: s.opts, Session: session, Runner: runner, Log: a.Log})
	if err != nil {
		return nil, err
	}
	if s.runs == nil {
		s.runs = map[string]*toolsearch.Runtime{}
	}
	if s.last.Value() != ix {
		s.last = weak.Make(ix)
		s.dropStale()
	}
	if _, ok := s.runs[session]; !ok {
		s.order = append(s.order, session)
		if len(s.order) > maxRuns {
			delete(s.runs, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.runs[session] = rt
	return rt, nil
}

// dropStale drops the runtimes of indexes the cache no longer keeps. A session's runtime is made
// anew for each index anyway, so an idle session's old one only kept its index, and the catalog
// version under it, in memory: one per catalog change. A run in flight keeps what it holds.
// s.mu is held.
func (s *toolSearchState) dropStale() {
	kept := s.order[:0]
	for _, sess := range s.order {
		if s.indexes.Holds(s.runs[sess].Index()) {
			kept = append(kept, sess)
		} else {
			delete(s.runs, sess)
		}
	}
	clear(s.order[len(kept):])
	s.order = kept
}

// toolSearchControls is the exposure engine's Controls: the mode's control tools bound to the
// session's runtime. Each control call also writes the run's telemetry to the session log.
func (a *App) toolSearchControls(mode exposure.Mode, snap *catalog.Snapshot, session string) []catalog.Entry {
	rt, err := a.toolSearchRuntime(snap, session)
	if err != nil {
		a.Log.Error("tool search unavailable", "err", err)
		return nil
	}
	m := toolsearch.ModeTools
	if mode == exposure.ToolSearchCode {
		m = toolsearch.ModeCode
	}
	entries := rt.ControlTools(m)
	for i := range entries {
		inner := entries[i].Exec
		entries[i].Exec = catalog.ExecutorFunc(func(ctx context.Context, call catalog.Call) (*catalog.Result, error) {
			res, err := inner.Execute(ctx, call)
			a.Telemetry.Write(call.Session, struct {
				Time       time.Time            `json:"time"`
				Type       string               `json:"type"`
				Tool       string               `json:"tool"`
				ToolSearch toolsearch.Telemetry `json:"tool_search"`
			}{time.Now().UTC(), "tool_search", call.Tool.Name, rt.Telemetry()})
			return res, err
		})
	}
	return entries
}
