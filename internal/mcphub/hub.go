package mcphub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
)

// State is where a server is in its life.
type State string

const (
	StateDisabled   State = "disabled"   // enabled: false in config; never started
	StateInvalid    State = "invalid"    // the config is wrong; never started
	StateIdle       State = "idle"       // the hub has not been started yet
	StateConnecting State = "connecting" // a connection attempt is under way
	StateReady      State = "ready"      // connected; calls go through
	StateDown       State = "down"       // died or failed to connect; waiting to restart
	StateClosed     State = "closed"     // the hub was closed
)

// Sentinel errors.
var (
	ErrClosed          = errors.New("mcp hub closed")
	ErrStarted         = errors.New("mcp hub already started")
	ErrUnknownServer   = errors.New("unknown mcp server")
	ErrUnknownPrompt   = errors.New("unknown prompt")
	ErrUnknownResource = errors.New("unknown resource")
)

// UnavailableError is the error of a call to a server that cannot take it now. It matches
// catalog.ErrUnavailable with errors.Is, and the server's last error too.
type UnavailableError struct {
	Server  string
	State   State
	RetryIn time.Duration // for StateDown: time until the next attempt
	Err     error         // the last error of the server, or the one that lost the call
	Stderr  []string      // for StateDown: the last lines a stdio server wrote to stderr
}

func (e *UnavailableError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcp server %q: %s", e.Server, e.State)
	if e.State == StateDown {
		fmt.Fprintf(&b, " (restarting in %s)", formatDelay(e.RetryIn))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if len(e.Stderr) > 0 {
		// What the server said before it died is usually the reason: a missing module, a key.
		b.WriteString("\nits last stderr lines:")
		for _, l := range e.Stderr {
			b.WriteString("\n  ")
			b.WriteString(l)
		}
	}
	return b.String()
}

// Unwrap makes the error match catalog.ErrUnavailable and the underlying cause.
func (e *UnavailableError) Unwrap() []error {
	if e.Err == nil {
		return []error{catalog.ErrUnavailable}
	}
	return []error{catalog.ErrUnavailable, e.Err}
}

// ServerStatus is one line of `nodmix mcp servers`. It never holds header or env values.
type ServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"` // "stdio" or "http"
	Target    string `json:"target"`    // the command, or the URL without query and user info
	State     State  `json:"state"`
	Tools     int    `json:"tools"`
	Prompts   int    `json:"prompts"`
	Resources int    `json:"resources"`
	Restarts  int    `json:"restarts"`      // connections lost or attempts failed since start
	PID       int    `json:"pid,omitempty"` // stdio: the process of the current or last attempt
	RetryInMs int64  `json:"retryInMs,omitempty"`
	LastError string `json:"lastError,omitempty"`
	// Stderr holds, while a stdio server is down, the last lines it wrote to stderr (secrets
	// masked), oldest first.
	Stderr []string `json:"stderr,omitempty"`
	// ToolsLeftOut says which tools of a stdio server's last listing could not be read, and
	// why ("tools[1]: \"name\" must be a string"); the server's other tools are served.
	ToolsLeftOut []string `json:"toolsLeftOut,omitempty"`
}

// Hub owns the connections to the downstream servers. It is safe for concurrent use. Every
// goroutine it starts ends before Close returns.
type Hub struct {
	log            *slog.Logger
	notify         func()
	clientName     string
	version        string
	connectTimeout time.Duration
	terminateGrace time.Duration
	pingInterval   time.Duration // <0: no pings
	pingTimeout    time.Duration
	backoff        Backoff
	dial           dialFunc
	clock          clock
	manifests      Manifests
	environ        func() []string
	listingLimit   int // bytes of one listing of one kind

	servers []*downstream // sorted by name; fixed after New
	byName  map[string]*downstream

	wg sync.WaitGroup

	mu        sync.Mutex
	started   bool
	closed    bool
	cancel    context.CancelFunc
	changed   chan struct{}
	watchers  map[int]func()
	nextWatch int
}

var _ catalog.Provider = (*Hub)(nil)

// New builds a hub for the servers. Invalid and duplicate configs do not stop the others: they
// show in Status with state "invalid" and the reason.
func New(opts Options) *Hub {
	h := &Hub{
		log:            opts.Log,
		notify:         opts.Notify,
		clientName:     opts.ClientName,
		version:        opts.Version,
		connectTimeout: opts.ConnectTimeout,
		terminateGrace: opts.TerminateGrace,
		pingInterval:   opts.PingInterval,
		pingTimeout:    opts.PingTimeout,
		backoff:        opts.Backoff.withDefaults(),
		clock:          realClock{},
		manifests:      opts.Manifests,
		environ:        opts.Environ,
		byName:         map[string]*downstream{},
		changed:        make(chan struct{}),
		watchers:       map[int]func(){},
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.notify == nil {
		h.notify = func() {}
	}
	if h.clientName == "" {
		h.clientName = "nodmix"
	}
	if h.version == "" {
		h.version = "dev"
	}
	if h.connectTimeout <= 0 {
		h.connectTimeout = DefaultConnectTimeout
	}
	if h.terminateGrace <= 0 {
		h.terminateGrace = DefaultTerminateGrace
	}
	if h.pingInterval == 0 {
		h.pingInterval = DefaultPingInterval
	}
	if h.pingTimeout <= 0 {
		h.pingTimeout = DefaultPingTimeout
	}
	if h.environ == nil {
		h.environ = os.Environ
	}
	if h.listingLimit = opts.listingLimit; h.listingLimit <= 0 {
		h.listingLimit = maxListingBytes
	}
	h.dial = dialConfig
	for _, cfg := range opts.Servers {
		d := newDownstream(h, cfg)
		if err := cfg.Validate(); err != nil {
			d.state, d.lastErr = StateInvalid, err
		} else if _, dup := h.byName[cfg.Name]; dup {
			d.state = StateInvalid
			d.lastErr = fmt.Errorf("%w: mcp.servers.%s: duplicate server name", ErrInvalidConfig, cfg.Name)
		} else if !cfg.Enabled {
			d.state = StateDisabled
		} else {
			d.runs = true
		}
		if _, dup := h.byName[cfg.Name]; !dup {
			h.byName[cfg.Name] = d
		}
		h.servers = append(h.servers, d)
	}
	slices.SortStableFunc(h.servers, func(a, b *downstream) int { return strings.Compare(a.cfg.Name, b.cfg.Name) })
	return h
}

// Start lists the tools of every server's cached manifest (see Options.Manifests), then connects
// every enabled server, each in its own goroutine with its own deadline, and returns at once: a
// slow or broken server never delays the others. ctx bounds the life of the connections (not
// just their start); Close ends them too.
func (h *Hub) Start(ctx context.Context) error {
	h.mu.Lock()
	switch {
	case h.closed:
		h.mu.Unlock()
		return ErrClosed
	case h.started:
		h.mu.Unlock()
		return ErrStarted
	}
	h.started = true
	h.mu.Unlock()
	if h.loadManifests(ctx) {
		h.notify()
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	ctx, h.cancel = context.WithCancel(ctx)
	for _, d := range h.servers {
		if d.runnable() {
			d.mu.Lock()
			d.state = StateConnecting
			d.mu.Unlock()
			h.wg.Go(func() { d.run(ctx) })
		}
	}
	h.mu.Unlock()
	h.bump()
	return nil
}

// Close stops every server and waits for all the hub's goroutines. Stdio servers get their stdin
// closed, then SIGTERM, then SIGKILL, TerminateGrace apart. Close is idempotent.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.wg.Wait()
		return nil
	}
	h.closed = true
	cancel := h.cancel
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	h.wg.Wait()
	for _, d := range h.servers {
		if d.runnable() {
			d.setState(StateClosed)
		}
	}
	return nil
}

// Tools returns the tools of every server, in server-name order and each server's sorted by id
// (the catalog orders its snapshot itself). A server that is down keeps the tools it
// last listed, so that a call reaches it and fails with a clear error instead of "unknown tool"
// and a restart does not make tools flicker in and out of client lists.
//
// A model-facing name two servers' tools map to stays with the server whose name sorts first,
// whichever connected first, so that the catalog does not refuse every rebuild over it.
func (h *Hub) Tools() []catalog.Entry {
	var out []catalog.Entry
	seen := map[string]bool{}
	for _, d := range h.servers {
		d.mu.Lock()
		tools := d.tools
		d.mu.Unlock()
		for _, e := range tools {
			if !seen[e.Tool.Name] {
				seen[e.Tool.Name] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// Status reports every configured server, sorted by name.
func (h *Hub) Status() []ServerStatus {
	out := make([]ServerStatus, 0, len(h.servers))
	for _, d := range h.servers {
		out = append(out, d.status())
	}
	return out
}

// Changed returns a channel that is closed at the next change of any server's state or lists.
// Callers wait on it and call Changed again for the next change.
func (h *Hub) Changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

func (h *Hub) bump() {
	h.mu.Lock()
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
}

// Settled waits until every enabled server has finished its first connection attempt, whether it
// succeeded or not. One-shot commands call it before they read Tools.
func (h *Hub) Settled(ctx context.Context) error {
	return h.waitAll(ctx, false)
}

// Listed waits until the tools of every enabled server are known: listed from its cached
// manifest, or its first connection attempt has ended. Searches wait for it, so that they use
// cached tools at once and wait only for servers never seen before.
func (h *Hub) Listed(ctx context.Context) error {
	return h.waitAll(ctx, true)
}

func (h *Hub) waitAll(ctx context.Context, cacheCounts bool) error {
	for {
		ch := h.Changed()
		if len(h.pending(cacheCounts)) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for mcp servers: %w", context.Cause(ctx))
		case <-ch:
		}
	}
}

// Unsettled names the enabled servers whose first connection attempt has not ended, in name
// order, so that whoever waits for them can say for which.
func (h *Hub) Unsettled() []string { return h.pending(false) }

func (h *Hub) pending(cacheCounts bool) []string {
	var out []string
	for _, d := range h.servers {
		d.mu.Lock()
		if d.runnable() && !d.attempted && d.state != StateClosed && !(cacheCounts && d.cached) {
			out = append(out, d.cfg.Name)
		}
		d.mu.Unlock()
	}
	return out
}

// FromCache reports whether the server's tools are the ones its cached manifest listed and it
// has not connected yet in this run: the MCP face marks such tools for clients.
func (h *Hub) FromCache(server string) bool {
	d, ok := h.byName[server]
	if !ok {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cached
}

// ConnectTimeout is the deadline of one connection attempt of the server (its connectTimeoutMs,
// else the hub's), or 0 for an unknown server.
func (h *Hub) ConnectTimeout(server string) time.Duration {
	d, ok := h.byName[server]
	if !ok {
		return 0
	}
	return d.connectTimeout
}

// WaitState waits until the named server is in one of the states.
func (h *Hub) WaitState(ctx context.Context, server string, states ...State) error {
	d, err := h.server(server)
	if err != nil {
		return err
	}
	for {
		ch := h.Changed()
		d.mu.Lock()
		st := d.state
		d.mu.Unlock()
		if slices.Contains(states, st) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for mcp server %q to be %v (it is %s): %w", server, states, st, context.Cause(ctx))
		case <-ch:
		}
	}
}

// Subscribe calls fn whenever the prompts or resources of any server change, until cancel is
// called. fn runs on a hub goroutine without hub locks held and must not block for long.
func (h *Hub) Subscribe(fn func()) (cancel func()) {
	h.mu.Lock()
	id := h.nextWatch
	h.nextWatch++
	h.watchers[id] = fn
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.watchers, id)
		h.mu.Unlock()
	}
}

func (h *Hub) firePassthrough() {
	h.mu.Lock()
	fns := make([]func(), 0, len(h.watchers))
	for _, fn := range h.watchers {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// server finds a configured server by name, whatever its state.
func (h *Hub) server(name string) (*downstream, error) {
	d, ok := h.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	return d, nil
}
