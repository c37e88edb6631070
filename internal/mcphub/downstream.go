package mcphub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/procgroup"
)

// protocolVersion is what the hub asks downstream servers for. The session-based 2025-11-25
// protocol is what the servers in the wild speak; the SDK negotiates down from it when needed.
const protocolVersion = "2025-11-25"

// maxPages bounds pagination so that a server repeating cursors cannot loop the hub forever.
const maxPages = 1000

// maxListingBytes bounds one listing of one kind, its items as JSON: pages of up to a frame's
// 16 MiB each would otherwise be held by the thousand. Real listings are a few MiB at most.
const maxListingBytes = 64 << 20

type kind uint32

const (
	kindTools kind = 1 << iota
	kindPrompts
	kindResources
	kindAll = kindTools | kindPrompts | kindResources
)

// downstream is one configured server and the goroutine that keeps it connected.
type downstream struct {
	h       *Hub
	cfg     ServerConfig
	runs    bool // see runnable
	scrub   *scrubber
	log     *slog.Logger // with the server's name; secrets scrubbed
	timeout time.Duration
	// connectTimeout bounds one connection attempt: the server's own, else the hub's.
	connectTimeout time.Duration
	client         *mcp.Client
	http           *http.Transport // url servers: owned, so that Close can drop its idle connections
	poked          chan struct{}   // list_changed arrived; capacity 1
	pending        atomic.Uint32   // kinds to list again
	// attemptCmd and attemptStderr belong to the current attempt; only the run goroutine
	// touches them.
	attemptCmd    *exec.Cmd
	attemptStderr *lineLogger
	attemptGroup  atomic.Int64 // the process group of the attempt's command, once started
	attemptAbort  func()       // ends what the attempt sends: HTTP requests, writes to stdin

	mu        sync.Mutex
	state     State
	conn      *conn // set only while ready
	pid       int   // stdio: the process of the latest attempt
	tools     []catalog.Entry
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	lastErr   error
	stderr    []string // a stdio server's last stderr lines, when it is down
	retryAt   time.Time
	readyAt   time.Time // when the current or last connection became ready
	attempted bool
	restarts  int
	// cached: the tools come from the server's manifest and it has not connected in this run.
	cached       bool
	savedTools   []byte // the listing last loaded or saved, as toolsJSON
	savedThisRun bool
	// leftOut: the tools of the last listing that could not be read (see screenToolsPage);
	// pageLeftOut gathers them while a listing is made.
	leftOut, pageLeftOut []string
}

func newDownstream(h *Hub, cfg ServerConfig) *downstream {
	d := &downstream{
		h:       h,
		cfg:     cfg,
		scrub:   newScrubber(cfg, inheritedEnv(h, cfg)),
		timeout: cfg.Timeout,
		poked:   make(chan struct{}, 1),
		state:   StateIdle,
	}
	if d.timeout <= 0 {
		d.timeout = DefaultCallTimeout
	}
	d.connectTimeout = cfg.ConnectTimeout
	if d.connectTimeout <= 0 {
		d.connectTimeout = h.connectTimeout
	}
	d.log = slog.New(scrubHandler{h.log.Handler(), d.scrub}).With("server", cfg.Name)
	log := d.log
	opts := &mcp.ClientOptions{
		Logger: log,
		// nodmix is a proxy: it offers no roots, sampling or elicitation of its own.
		Capabilities:               &mcp.ClientCapabilities{},
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { d.poke(kindTools) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { d.poke(kindPrompts) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { d.poke(kindResources) },
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			if req.Params != nil {
				log.Debug("mcp server log message", "level", req.Params.Level, "logger", req.Params.Logger)
			}
		},
	}
	if cfg.URL != "" {
		// No opts.KeepAlive: the hub's own pings (see serve) cover url servers too.
		d.http = http.DefaultTransport.(*http.Transport).Clone()
	}
	d.client = mcp.NewClient(&mcp.Implementation{Name: h.clientName, Version: h.version}, opts)
	return d
}

// runnable reports whether the hub runs this server: valid config, enabled, not a duplicate.
// It is fixed at New, so it needs no lock.
func (d *downstream) runnable() bool { return d.runs }

// poke asks the run loop to list again. It never blocks: it runs on the session's reader.
func (d *downstream) poke(k kind) {
	d.pending.Or(uint32(k))
	select {
	case d.poked <- struct{}{}:
	default:
	}
}

func (d *downstream) setState(s State) {
	d.mu.Lock()
	d.state = s
	d.mu.Unlock()
	d.h.bump()
}

// run keeps the server connected until ctx ends, restarting it with backoff.
func (d *downstream) run(ctx context.Context) {
	if d.http != nil {
		defer d.http.CloseIdleConnections()
	}
	// The end of ctx ended the connection too: a server left ready would hand its closed
	// session to calls, and one left connecting would hold whoever waits for it, until Close.
	defer func() {
		d.mu.Lock()
		d.state, d.conn = StateClosed, nil
		d.mu.Unlock()
		d.h.bump()
	}()
	log := d.log
	b, clk := d.h.backoff, d.h.clock
	delay := b.Initial
	for {
		d.setState(StateConnecting)
		c, err := d.connect(ctx)
		if err == nil {
			log.Info("mcp server ready", "transport", d.cfg.Transport())
			err = d.serve(ctx, c)
			// A server that stayed up has recovered: its next crash is retried after the first
			// wait again, however long the waits before this connection had grown.
			d.mu.Lock()
			up := d.readyAt
			d.mu.Unlock()
			if clk.Now().Sub(up) >= b.StableAfter {
				delay = b.Initial
			}
		}
		if ctx.Err() != nil {
			return
		}
		d.fail(err, delay)
		log.Warn("mcp server down", "err", err, "retry_in", delay)
		wait, stop := clk.After(delay)
		select {
		case <-ctx.Done():
			stop()
			return
		case <-wait:
		}
		delay = min(delay*2, b.Max)
	}
}

// connect makes one connection attempt under the connect deadline: initialize, then list.
func (d *downstream) connect(ctx context.Context) (*conn, error) {
	cctx, cancel := context.WithTimeout(ctx, d.connectTimeout)
	defer cancel()
	d.attemptStderr, d.attemptAbort = nil, nil
	d.attemptGroup.Store(0)
	// At the deadline, or when the hub closes, a server still connecting is killed at once: it
	// holds no state yet, and the SDK's graceful close would hold whoever waits for this attempt
	// TerminateGrace longer than connectTimeoutMs says. (stop runs before cancel.)
	stop := context.AfterFunc(cctx, func() { _ = procgroup.Kill(int(d.attemptGroup.Load())) })
	defer stop()
	t, err := d.h.dial(cctx, d)
	if err != nil {
		return nil, d.scrub.err(fmt.Errorf("start: %w", err))
	}
	d.pending.Store(0) // the full listing below covers what was pending
	cs, err := d.client.Connect(cctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	group := 0 // the stdio server's process group, led by its process
	if cmd := d.attemptCmd; cmd != nil && cmd.Process != nil {
		group = cmd.Process.Pid
		d.mu.Lock()
		d.pid = cmd.Process.Pid
		d.mu.Unlock()
	}
	d.attemptCmd = nil
	abort := d.attemptAbort
	if abort == nil {
		abort = func() {}
	}
	if err != nil {
		// The SDK has ended the server; what it started may still run.
		_ = procgroup.Kill(group)
		abort()
		if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("no answer to initialize within %s", d.connectTimeout)
		}
		return nil, d.scrub.err(fmt.Errorf("initialize: %w", err))
	}
	c := watch(cs)
	c.group, c.abort, c.grace = group, abort, d.h.terminateGrace
	l, err := d.list(cctx, cs, kindAll)
	// Once listed, the server is connected: the deadline must no longer kill it (saving the
	// manifest below may outlast it). A kill that has begun has lost the attempt.
	if err == nil && !stop() {
		err = cctx.Err()
	}
	if err != nil {
		c.close()
		if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("no complete listing within %s", d.connectTimeout)
		}
		return nil, d.scrub.err(fmt.Errorf("list: %w", err))
	}
	d.apply(l, c)
	d.saveManifest(ctx, l.tools, l.toolsJSON)
	return c, nil
}

// conn is a live session and the signal of its end. Its watcher goroutine belongs to the run
// loop, which waits for it (close) before it goes on.
type conn struct {
	cs    *mcp.ClientSession
	dead  chan struct{} // closed when the session has ended
	err   error         // why, once dead is closed
	group int           // a stdio server's process group; 0 for url servers
	abort func()        // ends what is being sent to the server
	grace time.Duration // how long close lets them finish first
	// For the liveness check (see serve): the requests of the hub's in flight on the session,
	// and when (the hub clock's UnixNano) the server last answered one.
	inflight atomic.Int64
	heard    atomic.Int64
}

func watch(cs *mcp.ClientSession) *conn {
	c := &conn{cs: cs, dead: make(chan struct{})}
	go func() {
		c.err = cs.Wait()
		close(c.dead)
	}()
	return c
}

// close ends the session (for a stdio server: its process, then whatever that process started)
// and waits for the watcher.
func (c *conn) close() {
	// The session's close waits for the answers it owes the server to be sent; a server that
	// never takes one (a url server's unanswered POST, a full stdin) would hold it forever, so
	// after the grace the sending ends.
	t := time.AfterFunc(c.grace, c.abort)
	_ = c.cs.Close()
	<-c.dead
	t.Stop()
	c.abort()
	_ = procgroup.Kill(c.group)
}

// diedWithin reports whether the session ends within d: a transport error on a call usually
// means the connection is going down, and the watcher sees it a moment later.
func (c *conn) diedWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.dead:
		return true
	case <-t.C:
		return false
	}
}

// relistGap is the least time between two listings after list_changed: a server that announces
// a change at every listing, or floods list_changed, would otherwise be listed in a busy loop,
// each changed listing rebuilding the catalog and its search index.
const relistGap = time.Second

// serve watches a ready session until it dies or ctx ends, re-listing on list_changed and
// pinging the server when it has been idle for the ping interval (see checkAlive).
func (d *downstream) serve(ctx context.Context, c *conn) error {
	// For a stdio server, closing also reaps the process.
	defer c.close()
	clk := d.h.clock
	var last time.Time       // when the last listing after list_changed began
	var gap <-chan time.Time // set while a listing waits for relistGap to pass
	stopGap := func() {}
	defer func() { stopGap() }()
	var probe <-chan time.Time // the next liveness check; nil when pings are off
	stopProbe := func() {}
	defer func() { stopProbe() }()
	arm := func(wait time.Duration) { probe, stopProbe = clk.After(wait) }
	if d.h.pingInterval > 0 {
		c.heard.Store(clk.Now().UnixNano())
		arm(d.h.pingInterval)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.dead:
			return d.deadErr(c)
		case <-probe:
			wait, err := d.checkAlive(ctx, c)
			if err != nil {
				return err
			}
			arm(wait)
			continue
		case <-d.poked:
			if gap != nil || d.pending.Load() == 0 {
				continue // the listing that waits covers it
			}
			if wait := relistGap - clk.Now().Sub(last); !last.IsZero() && wait > 0 {
				gap, stopGap = clk.After(wait)
				continue
			}
		case <-gap:
			gap, stopGap = nil, func() {}
		}
		last = clk.Now()
		d.relist(ctx, c)
	}
}

// deadErr says why a session whose dead channel is closed ended.
func (d *downstream) deadErr(c *conn) error {
	if c.err == nil {
		return errors.New("connection closed by the server")
	}
	return d.scrub.err(fmt.Errorf("connection closed: %w", c.err))
}

// relist lists again what list_changed said had changed.
func (d *downstream) relist(ctx context.Context, c *conn) {
	k := kind(d.pending.Swap(0))
	if k == 0 {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, d.connectTimeout)
	done := c.request(d.h.clock)
	l, err := d.list(lctx, c.cs, k)
	done(err)
	cancel()
	if err != nil {
		// A dead session shows up on done; anything else keeps the lists we have.
		d.log.Warn("mcp server: listing after list_changed failed", "err", err)
		return
	}
	d.apply(l, nil)
	if l.have&kindTools != 0 {
		d.saveManifest(ctx, l.tools, l.toolsJSON)
	}
}

func (d *downstream) fail(err error, delay time.Duration) {
	if err == nil {
		err = errors.New("stopped")
	}
	var tail []string
	if d.attemptStderr != nil {
		tail = d.attemptStderr.tail()
	}
	// A JSON-RPC error in the chain is the server's answer to a request of the attempt (it
	// refused initialize or a listing); the errors of later calls wrap this one, and the MCP face
	// passes a JSON-RPC error it finds in a call's error on as the call's answer. The text stays,
	// its secrets already masked.
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		err = errors.New(err.Error())
	}
	d.mu.Lock()
	d.state, d.conn, d.lastErr, d.stderr = StateDown, nil, err, tail
	d.retryAt = d.h.clock.Now().Add(delay)
	d.attempted = true
	d.restarts++
	d.mu.Unlock()
	d.h.bump()
}

// lists is the result of one listing; have says which kinds it holds.
type lists struct {
	have      kind
	tools     []*mcp.Tool
	toolsJSON []byte   // tools as toolsJSON encodes them; nil if they could not be encoded
	leftOut   []string // the tools left out of the listing, with why
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

func (d *downstream) list(ctx context.Context, cs *mcp.ClientSession, k kind) (lists, error) {
	caps := &mcp.ServerCapabilities{}
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	l := lists{have: k}
	var err error
	if k&kindTools != 0 && caps.Tools != nil {
		d.takeLeftOut()
		l.tools, err = paginate(ctx, d.h.listingLimit, &l.toolsJSON, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
			r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Tools, r.NextCursor, nil
		})
		if err != nil {
			return l, fmt.Errorf("tools/list: %w", err)
		}
		l.leftOut = d.takeLeftOut()
	}
	if k&kindPrompts != 0 && caps.Prompts != nil {
		l.prompts, err = paginate(ctx, d.h.listingLimit, nil, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
			r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Prompts, r.NextCursor, nil
		})
		if l.prompts, err = optional(d, l.prompts, err, "prompts/list"); err != nil {
			return l, err
		}
	}
	if k&kindResources != 0 && caps.Resources != nil {
		l.resources, err = paginate(ctx, d.h.listingLimit, nil, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
			r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		})
		if l.resources, err = optional(d, l.resources, err, "resources/list"); err != nil {
			return l, err
		}
		l.templates, err = paginate(ctx, d.h.listingLimit, nil, func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.ResourceTemplates, r.NextCursor, nil
		})
		if l.templates, err = optional(d, l.templates, err, "resources/templates/list"); err != nil {
			return l, err
		}
	}
	return l, nil
}

// optional passes on a listing of prompts, resources or templates, or the error of one. A
// server that refuses such a listing (many that declare resources answer
// resources/templates/list with "method not found") lists none: its tools must not be lost
// over it. A failure of the connection is still the listing's error.
func optional[T any](d *downstream, items []*T, err error, method string) ([]*T, error) {
	var wire *jsonrpc.Error
	switch {
	case err == nil:
		return items, nil
	case errors.As(err, &wire):
		d.log.Warn("mcp server refused a listing it declared; taking it for empty", "method", method, "err", wire.Message)
		return nil, nil
	default:
		return nil, fmt.Errorf("%s: %w", method, err)
	}
}

// paginate lists every page. Each page is encoded to bound the listing's size; with encoded
// set, the encodings are joined into the listing's JSON, which is json.Marshal(items) byte for
// byte, so that the manifest is saved without encoding the listing twice more.
func paginate[T any](ctx context.Context, limit int, encoded *[]byte, page func(context.Context, string) ([]*T, string, error)) ([]*T, error) {
	var out []*T
	var joined []byte
	if encoded != nil {
		joined = append(joined, '[')
	}
	cursor := ""
	size := 0
	for range maxPages {
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, err
		}
		kept := items
		if slices.Contains(items, nil) {
			kept = slices.DeleteFunc(slices.Clone(items), func(it *T) bool { return it == nil })
		}
		out = append(out, kept...)
		if len(kept) > 0 {
			b, err := json.Marshal(kept)
			if err == nil {
				size += len(b)
			}
			switch {
			case joined == nil:
			case err != nil:
				joined = nil // no JSON of the listing: the manifest's encoding says why
			default:
				if len(joined) > 1 {
					joined = append(joined, ',')
				}
				joined = append(joined, b[1:len(b)-1]...)
			}
		}
		if size > limit {
			return nil, fmt.Errorf("the listing exceeds %d MiB", limit>>20)
		}
		if next == "" {
			if joined != nil {
				*encoded = append(joined, ']')
			}
			return out, nil
		}
		if next == cursor {
			return nil, fmt.Errorf("server repeated the cursor %q", next)
		}
		cursor = next
	}
	return nil, fmt.Errorf("more than %d pages", maxPages)
}

// apply installs a listing and tells whoever cares. With ready set, the server becomes ready in
// the same step, so that nobody sees it ready without its tools.
func (d *downstream) apply(l lists, ready *conn) {
	var toolsChanged, otherChanged bool
	var clashes []catalog.Entry // a new listing, to check against the other servers'
	d.mu.Lock()
	if ready != nil {
		d.state, d.conn, d.lastErr, d.stderr, d.attempted = StateReady, ready, nil, nil, true
		d.readyAt = d.h.clock.Now()
		// Tools listed from the cache are no longer marked as waiting for their server.
		toolsChanged = d.cached
		d.cached = false
	}
	if l.have&kindTools != 0 {
		entries := d.entries(l.tools)
		// A tool the cache listed and the server no longer has goes here.
		if !sameEntries(d.tools, entries) {
			toolsChanged, clashes = true, entries
		}
		d.tools, d.leftOut = entries, l.leftOut
	}
	if l.have&kindPrompts != 0 {
		otherChanged = otherChanged || !sameJSON(d.prompts, l.prompts)
		d.prompts = l.prompts
	}
	if l.have&kindResources != 0 {
		otherChanged = otherChanged || !sameJSON(d.resources, l.resources) || !sameJSON(d.templates, l.templates)
		d.resources, d.templates = l.resources, l.templates
	}
	d.mu.Unlock()
	d.logNameClashes(clashes)
	// The catalog first, then whoever waits on the hub: a wait for a server that ends finds its
	// tools in the catalog already.
	if toolsChanged {
		d.h.notify()
	}
	d.h.bump()
	if otherChanged {
		d.h.firePassthrough()
	}
}

// entries turns a server's tools into catalog entries, sorted by id. A name listed twice keeps
// its first definition: a server contradicting itself must not break the catalog.
func (d *downstream) entries(tools []*mcp.Tool) []catalog.Entry {
	server := d.cfg.Name
	out := make([]catalog.Entry, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t.Name == "" || seen[t.Name] {
			d.log.Warn("mcp server listed a tool without a name or twice; keeping the first", "tool", t.Name)
			continue
		}
		seen[t.Name] = true
		var schema json.RawMessage
		if t.InputSchema != nil {
			if b, err := json.Marshal(t.InputSchema); err == nil && string(b) != "null" {
				schema = b
			}
		}
		if schema != nil && !objectSchema(schema) {
			// Providers refuse a request whose tool parameters are not an object schema, so
			// one such tool would fail every turn.
			d.log.Warn("mcp server listed a tool whose input schema is not an object schema; leaving it out", "tool", t.Name)
			continue
		}
		label := t.Title
		if label == "" && t.Annotations != nil {
			label = t.Annotations.Title
		}
		out = append(out, catalog.Entry{
			Tool: catalog.Tool{
				ID:          catalog.ID(catalog.SourceMCP, server, t.Name),
				Name:        catalog.MCPName(server, t.Name),
				Label:       label,
				Description: t.Description,
				InputSchema: schema,
				Source:      catalog.SourceMCP,
				Owner:       server,
				Server:      server,
				MCPToolName: t.Name,
				LoadMode:    catalog.Discoverable,
			},
			Exec: toolExec{d: d, name: t.Name},
		})
	}
	slices.SortFunc(out, func(a, b catalog.Entry) int { return strings.Compare(a.Tool.ID, b.Tool.ID) })
	// Two names can map to one model-facing name (SafeName's replacement of an odd name is a
	// valid name too); the catalog would refuse every rebuild over it, so the first id keeps it.
	names := make(map[string]bool, len(out))
	out = slices.DeleteFunc(out, func(e catalog.Entry) bool {
		if names[e.Tool.Name] {
			d.log.Warn("mcp server listed two tools with the same model-facing name; keeping the first", "tool", e.Tool.MCPToolName, "name", e.Tool.Name)
			return true
		}
		names[e.Tool.Name] = true
		return false
	})
	return out
}

// logNameClashes says which of the server's tools share their model-facing name with another
// server's (server names may hold "__": a's tool b__c and a__b's tool c are both mcp__a__b__c).
// Tools leaves out all but the first server's, in name order.
func (d *downstream) logNameClashes(entries []catalog.Entry) {
	if len(d.h.servers) < 2 || len(entries) == 0 {
		return
	}
	names := make(map[string]string, len(entries))
	for _, e := range entries {
		names[e.Tool.Name] = e.Tool.MCPToolName
	}
	for _, o := range d.h.servers {
		if o == d {
			continue
		}
		o.mu.Lock()
		for _, e := range o.tools {
			if tool, ok := names[e.Tool.Name]; ok {
				kept, keptTool, lost, lostTool := d.cfg.Name, tool, o.cfg.Name, e.Tool.MCPToolName
				if o.cfg.Name < d.cfg.Name {
					kept, keptTool, lost, lostTool = lost, lostTool, kept, keptTool
				}
				d.log.Warn("two mcp servers have tools with the same model-facing name; the one of the server whose name sorts first is kept",
					"name", e.Tool.Name, "kept_server", kept, "kept_tool", keptTool, "left_out_server", lost, "left_out_tool", lostTool)
			}
		}
		o.mu.Unlock()
	}
}

// objectSchema reports whether schema, valid JSON, is an object whose type, if it names one, is
// "object".
func objectSchema(schema json.RawMessage) bool {
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	if schema[0] != '{' || json.Unmarshal(schema, &s) != nil {
		return false
	}
	return s.Type == nil || string(s.Type) == `"object"`
}

func sameEntries(a, b []catalog.Entry) bool {
	return slices.EqualFunc(a, b, func(x, y catalog.Entry) bool {
		tx, ty := &x.Tool, &y.Tool
		return tx.ID == ty.ID && tx.Name == ty.Name && tx.Label == ty.Label &&
			tx.Description == ty.Description && bytes.Equal(tx.InputSchema, ty.InputSchema)
	})
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func (d *downstream) status() ServerStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := ServerStatus{
		Name:      d.cfg.Name,
		Transport: d.cfg.Transport(),
		Target:    d.scrub.replace(d.cfg.target()),
		State:     d.state,
		Tools:     len(d.tools),
		Prompts:   len(d.prompts),
		Resources: len(d.resources),
		Restarts:  d.restarts,
	}
	st.PID = d.pid
	st.ToolsLeftOut = d.leftOut
	if d.state == StateDown {
		st.RetryInMs = max(0, d.retryAt.Sub(d.h.clock.Now())).Milliseconds()
		st.Stderr = d.stderr
	}
	if d.lastErr != nil {
		st.LastError = d.scrub.replace(d.lastErr.Error())
	}
	return st
}

// session returns the live session, or an error that says why there is none.
func (d *downstream) session() (*conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state == StateReady && d.conn != nil {
		return d.conn, nil
	}
	e := &UnavailableError{Server: d.cfg.Name, State: d.state, Err: d.lastErr}
	if d.state == StateDown {
		e.RetryIn = max(0, d.retryAt.Sub(d.h.clock.Now()))
		e.Stderr = d.stderr
	}
	return nil, e
}

// await returns the live session, waiting while the server is connecting: a call made right
// after start-up, to a tool its cached manifest listed, waits for the server instead of failing.
// The attempt under way ends by its connect deadline, so the wait is bounded by it (and by ctx).
func (d *downstream) await(ctx context.Context) (*conn, error) {
	// A ready server, the usual case, needs no look at the hub-wide change channel and its lock.
	if c, err := d.session(); err == nil {
		return c, nil
	}
	for {
		ch := d.h.Changed()
		c, err := d.session()
		if err == nil {
			return c, nil
		}
		var ue *UnavailableError
		if !errors.As(err, &ue) || ue.State != StateConnecting {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("mcp server %q: waiting for it to connect: %w", d.cfg.Name, context.Cause(ctx))
		case <-ch:
		}
	}
}
