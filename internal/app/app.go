// Package app assembles nodmix from its configuration — store, MCP hub, plugins, built-ins,
// catalog, policy, dispatch, exposure — and shuts it down in order. Every face takes an *App.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/mcphub"
	"github.com/nodmix/nodmix/internal/mcpserve"
	"github.com/nodmix/nodmix/internal/plugin"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sqlite"
	"github.com/nodmix/nodmix/internal/telemetry"
)

// Options say how to assemble the app.
type Options struct {
	Getenv func(string) string
	Log    *slog.Logger
	// Tools, when set, replaces every live source (built-ins, plugins, MCP servers) with these
	// descriptors: `--catalog FILE`. They have no executors; calling one fails clearly.
	Tools []catalog.Tool
	// Mode overrides the exposure mode the config resolves to; empty keeps it.
	Mode exposure.Mode
	// Persistent opens the SQLite store under the home directory; otherwise state lives in memory.
	Persistent bool
	// ConnectMCP starts the downstream MCP servers of the config.
	ConnectMCP bool
	// Code starts the code-mode sandbox even when the config does not ask for code mode
	// (`nodmix tools code`).
	Code bool
	// SandboxCommand starts a sandbox child; nil re-executes this binary (tests set their own).
	SandboxCommand []string
	// IndexAhead builds the search index of every new catalog snapshot in the background, for
	// a long-running face: its first search finds the index built.
	IndexAhead bool
	// Version is nodmix's version as MCP servers are told it in initialize; empty is the hub's
	// default.
	Version string
}

// App is an assembled nodmix. Fields are set by New and read-only afterwards.
type App struct {
	Log       *slog.Logger
	Home      string
	File      *config.File
	Config    *config.Config
	Store     session.Store
	Catalog   *catalog.Catalog
	Pipeline  *dispatch.Pipeline
	Discovery *discovery.Service
	Engine    *exposure.Engine
	Plugins   map[string]plugin.Plugin
	Hub       *mcphub.Hub // nil without downstream servers
	Telemetry *telemetry.Recorder

	persistent bool
	lookupEnv  func(string) (string, bool)
	askers     askerRouter
	logDir     string
	toolSearch toolSearchState
	agents     agentState

	// closersMu guards closers: New appends alone, but Providers appends on the first turn, from
	// a request's goroutine, maybe while a shutting-down face runs Close.
	closersMu sync.Mutex
	closers   []func() error
	// now, when set (by tests), is the clock of /fast auto's window; nil is time.Now.
	now func() time.Time
}

// clock is the app's clock.
func (a *App) clock() func() time.Time {
	if a.now != nil {
		return a.now
	}
	return time.Now
}

// New assembles the app. On error everything already started is closed.
func New(ctx context.Context, opts Options) (a *App, err error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The deferred clean-up holds its own reference: `return nil, err` sets the named result to
	// nil before deferred calls run, so closing through a would close nothing (and panic).
	built := &App{Log: log, Plugins: map[string]plugin.Plugin{}}
	a = built
	a.lookupEnv = func(k string) (string, bool) { v := opts.Getenv(k); return v, v != "" }
	defer func() {
		if err != nil {
			_ = built.Close()
			a = nil
		}
	}()
	if a.Home, err = config.Home(opts.Getenv); err != nil {
		return nil, err
	}
	path, err := config.Path(opts.Getenv)
	if err != nil {
		return nil, err
	}
	if a.File, err = config.Load(path); err != nil {
		return nil, err
	}
	a.Config = a.File.Config()

	if opts.Persistent {
		a.persistent = true
		a.logDir = filepath.Join(a.Home, "logs")
		st, err := sqlite.Open(ctx, filepath.Join(a.Home, "state.db"))
		if err != nil {
			return nil, err
		}
		a.Store = st
	} else {
		a.Store = session.NewMemory()
	}
	a.addCloser(a.Store.Close)

	a.Catalog = catalog.New(log)
	a.Pipeline = &dispatch.Pipeline{Policy: dispatch.AllowAll{}, Log: log}

	if opts.Tools != nil {
		entries := make([]catalog.Entry, len(opts.Tools))
		for i, t := range opts.Tools {
			entries[i] = catalog.Entry{Tool: t, Exec: noExecutor{}}
		}
		a.Catalog.Add(catalog.Static(entries))
	} else if err := a.addSources(ctx, opts); err != nil {
		return nil, err
	}
	if err := a.Catalog.Err(); err != nil {
		return nil, err
	}
	if err := a.addPolicy(); err != nil {
		return nil, err
	}
	a.assembleExposure(ctx, opts)
	return a, nil
}

// noExecutor runs descriptors that were loaded from a catalog file.
type noExecutor struct{}

func (noExecutor) Execute(_ context.Context, c catalog.Call) (*catalog.Result, error) {
	return catalog.ErrorResult(fmt.Sprintf("Tool %q comes from a catalog file and has no implementation here.", c.Tool.ID)), nil
}

// httpClient is the client plugins share. Plugins give each request its own deadline; the
// client's timeout is only a backstop, above the longest a plugin may configure (tavily's 600 s).
func httpClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 15 * time.Minute}
}

// Close shuts everything down in reverse order of start.
func (a *App) Close() error {
	a.closersMu.Lock()
	closers := a.closers
	a.closers = nil
	a.closersMu.Unlock()
	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// addCloser registers what Close releases, after what is already registered.
func (a *App) addCloser(c func() error) {
	a.closersMu.Lock()
	a.closers = append(a.closers, c)
	a.closersMu.Unlock()
}

// serverWait bounds how long a one-shot command waits for downstream servers that are still
// connecting: a stuck server must not hold a command for its whole connect timeout.
const serverWait = 10 * time.Second

// WaitForServers waits until every downstream server has had its first connection attempt (at
// most serverWait, or until ctx ends), so a one-shot command sees their tools. Long-running faces
// do not wait at start-up (tools arrive as servers connect); their searches wait through
// exposure.Engine.Ready, which bounds the wait itself.
func (a *App) WaitForServers(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, serverWait)
	defer cancel()
	a.serversSettled(ctx)
}

// serversSettled waits until every downstream server has had its first connection attempt, or
// until ctx ends.
func (a *App) serversSettled(ctx context.Context) {
	if a.Hub != nil {
		_ = a.Hub.Settled(ctx)
	}
}

// GatewayToken resolves gateway.auth.token ("" when not set).
func (a *App) GatewayToken() (string, error) {
	tok := a.Config.Gateway.Auth.Token
	if !tok.IsSet() {
		return "", nil
	}
	v, err := tok.Resolve(a.lookupEnv)
	if err != nil {
		return "", err // names the path already
	}
	return v, nil
}

// Sessions serves MCP sessions from the exposure engine.
func (a *App) Sessions() mcpserve.Sessions { return sessions{a} }

type sessions struct{ a *App }

func (s sessions) Open(ctx context.Context, id string) (mcpserve.Session, error) {
	return s.a.Engine.Open(ctx, id)
}

// The exposure view is an MCP session that can ask its user for approvals, and the app routes
// those askers to the approval gate.
var (
	_ mcpserve.Session       = (*exposure.View)(nil)
	_ mcpserve.Elicitor      = (*exposure.View)(nil)
	_ exposure.SessionAskers = (*App)(nil)
)
