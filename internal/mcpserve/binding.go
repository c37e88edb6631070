package mcpserve

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// binding is one MCP session: an SDK server of its own, whose tool set mirrors Session.Tools so
// that the SDK sends notifications/tools/list_changed to exactly this client when it changes.
type binding struct {
	srv  *Server
	id   string
	sess Session
	mcp  *mcp.Server
	log  *slog.Logger

	toolsDirty atomic.Bool
	otherDirty atomic.Bool
	kick       chan struct{} // capacity 1: something is dirty
	stop       chan struct{}
	done       chan struct{} // the sync goroutine ended

	// calls holds the cancel of every request in progress: closing an SDK session waits for
	// them, so whoever ends a session (shutdown, DELETE, eviction) cancels them first with
	// stopCalls. A set, not a context the binding cancels: a request's context waiting on a
	// second parent costs an AfterFunc and its allocations on every request.
	callsMu sync.Mutex
	calls   map[uint64]context.CancelFunc // nil once stopCalls ran
	callSeq uint64

	// abortWrites, set by Serve for a transport that has one, ends a write of an answer in
	// progress, which a client that does not read holds: closing the SDK session waits for it.
	abortWrites atomic.Pointer[func()]

	cancelTools func()
	cancelOther func()

	elicitOnce   sync.Once
	elicitMu     sync.Mutex
	cancelElicit func() // set once elicitation is in use
	closeOnce    sync.Once
	closeErr     error

	mu        sync.Mutex          // serializes syncs
	tools     map[string][32]byte // name → fingerprint of what the SDK server lists
	prompts   map[string][32]byte
	resources map[string][32]byte
	templates map[string][32]byte
}

// newBinding opens the core session and prepares its SDK server with the current lists, so that
// the client's first tools/list already sees them and no list_changed follows initialize.
func (s *Server) newBinding(ctx context.Context, id string) (*binding, error) {
	sess, err := s.sessions.Open(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("opening session: %w", err)
	}
	b := &binding{
		srv:       s,
		id:        id,
		sess:      sess,
		log:       s.log.With("session", id),
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		tools:     map[string][32]byte{},
		prompts:   map[string][32]byte{},
		resources: map[string][32]byte{},
		templates: map[string][32]byte{},
	}
	b.calls = map[uint64]context.CancelFunc{}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if s.opts.Prompts != nil {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if s.opts.Resources != nil {
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	}
	b.mcp = mcp.NewServer(s.impl(), &mcp.ServerOptions{
		Instructions:              s.opts.Instructions,
		Logger:                    sdkLog(b.log),
		Capabilities:              caps,
		GetSessionID:              func() string { return id },
		SupportedProtocolVersions: s.versions,
	})
	b.mcp.AddReceivingMiddleware(b.middleware)
	// Subscribed before the first sync, so that no change falls between the two.
	b.cancelTools = sess.Subscribe(func() { b.mark(&b.toolsDirty) })
	var cancels []func()
	for _, v := range []any{s.opts.Prompts, s.opts.Resources} {
		if w, ok := v.(Watcher); ok {
			cancels = append(cancels, w.Subscribe(func() { b.mark(&b.otherDirty) }))
		}
	}
	b.cancelOther = func() {
		for _, c := range cancels {
			c()
		}
	}
	b.toolsDirty.Store(true) // the first syncs always run
	b.otherDirty.Store(true)
	b.syncTools()
	b.syncOther()
	go b.run()
	// Registered last: Server.Close may close it from then on.
	if err := s.register(b); err != nil {
		_ = b.close()
		return nil, err
	}
	return b, nil
}

// stopCalls cancels the requests in progress, and every later one as it begins.
func (b *binding) stopCalls() {
	b.callsMu.Lock()
	calls := b.calls
	b.calls = nil
	b.callsMu.Unlock()
	for _, cancel := range calls {
		cancel()
	}
}

// trackCall adds the cancel of a request that begins to the set stopCalls cancels, or cancels
// it at once if stopCalls has run; untrackCall removes it. An id, not a closure, to undo it:
// a closure would be allocated on every request.
func (b *binding) trackCall(cancel context.CancelFunc) (id uint64) {
	b.callsMu.Lock()
	defer b.callsMu.Unlock()
	if b.calls == nil {
		cancel()
		return 0
	}
	b.callSeq++
	b.calls[b.callSeq] = cancel
	return b.callSeq
}

func (b *binding) untrackCall(id uint64) {
	b.callsMu.Lock()
	delete(b.calls, id)
	b.callsMu.Unlock()
}

func (b *binding) mark(dirty *atomic.Bool) {
	dirty.Store(true)
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// run applies changes as they are announced, so that the client hears of them without asking.
func (b *binding) run() {
	defer close(b.done)
	for {
		select {
		case <-b.stop:
			return
		case <-b.kick:
			b.syncTools()
			b.syncOther()
		}
	}
}

// close ends the binding: unsubscribes, stops the sync goroutine and closes the core session.
func (b *binding) close() error {
	b.closeOnce.Do(func() {
		b.stopCalls()
		b.cancelTools()
		b.cancelOther()
		b.elicitMu.Lock()
		if b.cancelElicit != nil {
			b.cancelElicit()
		}
		b.elicitMu.Unlock()
		close(b.stop)
		<-b.done
		b.closeErr = b.sess.Close()
		b.srv.unregister(b)
	})
	return b.closeErr
}

// middleware brings the lists up to date before the client reads them (a tool activated by the
// previous call must be listed by the next tools/list, not 10ms later), and sends tools/call to
// the session directly: the session, not the SDK's copy of the list, decides what can be called.
// Every request ends when the binding quits, and every error it returns has a JSON-RPC code.
func (b *binding) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (_ mcp.Result, err error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer b.untrackCall(b.trackCall(cancel))
		defer func() {
			if err != nil {
				err = withCode(err) // the SDK would send a plain error with code 0
			}
		}()
		switch method {
		case "tools/list":
			if w, ok := b.sess.(ToolWaiter); ok {
				w.WaitTools(ctx)
			}
			// Always through syncTools: it waits for a sync in progress, whose list may predate
			// the latest activation, before deciding whether another is needed.
			b.syncTools()
		case "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok {
				return b.callTool(ctx, r)
			}
		case "prompts/list", "resources/list", "resources/templates/list":
			b.syncOther()
		}
		return next(ctx, method, req)
	}
}

func (b *binding) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params == nil || req.Params.Name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `tools/call: "name" is required`}
	}
	args, err := objectArgs(req.Params.Arguments)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tools/call %q: %v", req.Params.Name, err)}
	}
	b.enableElicitation(req.Session)
	res, err := b.sess.Call(ctx, req.Params.Name, args)
	if err != nil {
		return nil, wireError(err, jsonrpc.CodeInvalidParams)
	}
	return toCallResult(res)
}

// enableElicitation lets the core session ask this client's user (approvals), once, when the
// client declared the elicitation capability.
func (b *binding) enableElicitation(ss *mcp.ServerSession) {
	el, ok := b.sess.(Elicitor)
	if !ok || ss == nil {
		return
	}
	b.elicitOnce.Do(func() {
		ip := ss.InitializeParams()
		if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
			return
		}
		cancel := el.UseElicitation(func(ctx context.Context, message string, schema any) (string, map[string]any, error) {
			res, err := ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: schema})
			if err != nil {
				return "", nil, err
			}
			return res.Action, res.Content, nil
		})
		b.elicitMu.Lock()
		b.cancelElicit = cancel
		b.elicitMu.Unlock()
	})
}

// wireError is the JSON-RPC error the client gets for err.
func wireError(err error, code int64) error {
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &wire):
		return wire
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	default:
		return &jsonrpc.Error{Code: code, Message: err.Error()}
	}
}

func fingerprint(v any) [32]byte {
	data, _ := json.Marshal(v)
	return sha256.Sum256(data)
}

// syncTools makes the SDK server list what the session shows, if anything changed since the last
// sync. The SDK notices a change and sends one (debounced) notifications/tools/list_changed.
func (b *binding) syncTools() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.toolsDirty.Swap(false) {
		return
	}
	var listed []catalog.Tool
	if l, ok := b.sess.(ToolLister); ok {
		var err error
		if listed, err = l.ListTools(); err != nil {
			b.toolsDirty.Store(true) // the next list or change tries again
			b.log.Warn("listing the session's tools failed; the client keeps the list it has", "err", err)
			return
		}
	} else {
		listed = b.sess.Tools()
	}
	var tools []*mcp.Tool
	seen := map[string]bool{}
	annotate, _ := b.sess.(ToolAnnotator)
	for _, t := range listed {
		if seen[t.Name] || t.Name == "" {
			b.log.Warn("session lists a tool name twice or empty; keeping the first", "tool", t.Name, "id", t.ID)
			continue
		}
		seen[t.Name] = true
		mt := &mcp.Tool{Name: t.Name, Title: t.Label, Description: t.Description, InputSchema: objectSchema(t.Schema())}
		if annotate != nil {
			mt.Meta = annotate.ToolMeta(&t)
		}
		tools = append(tools, mt)
	}
	// The middleware sends tools/call to the session before the SDK's handler is reached.
	b.tools = syncSet(b, tools, b.tools,
		func(x *mcp.Tool) string { return x.Name },
		func(names ...string) { b.mcp.RemoveTools(names...) },
		func(x *mcp.Tool) { b.mcp.AddTool(x, b.callTool) })
}

// syncOther mirrors the passed-through prompts, resources and resource templates.
func (b *binding) syncOther() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.otherDirty.Swap(false) {
		return
	}
	if p := b.srv.opts.Prompts; p != nil {
		b.prompts = syncSet(b, p.Prompts(), b.prompts,
			func(x *mcp.Prompt) string { return x.Name },
			func(names ...string) { b.mcp.RemovePrompts(names...) },
			func(x *mcp.Prompt) { b.mcp.AddPrompt(x, b.promptHandler) })
	}
	if r := b.srv.opts.Resources; r != nil {
		b.resources = syncSet(b, r.Resources(), b.resources,
			func(x *mcp.Resource) string { return x.URI },
			func(uris ...string) { b.mcp.RemoveResources(uris...) },
			func(x *mcp.Resource) { b.mcp.AddResource(x, b.resourceHandler) })
		b.templates = syncSet(b, r.ResourceTemplates(), b.templates,
			func(x *mcp.ResourceTemplate) string { return x.URITemplate },
			func(ts ...string) { b.mcp.RemoveResourceTemplates(ts...) },
			func(x *mcp.ResourceTemplate) { b.mcp.AddResourceTemplate(x, b.resourceHandler) })
	}
}

func syncSet[T any](b *binding, items []*T, have map[string][32]byte, key func(*T) string, remove func(...string), add func(*T)) map[string][32]byte {
	want := map[string][32]byte{}
	for _, it := range items {
		k := key(it)
		if _, dup := want[k]; dup || k == "" {
			continue
		}
		fp := fingerprint(it)
		if old, ok := have[k]; ok && old == fp {
			want[k] = fp
			continue
		}
		if err := safely(func() { add(it) }); err != nil {
			b.log.Warn("not served", "key", k, "err", err)
			continue
		}
		want[k] = fp
	}
	var gone []string
	for k := range have {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	slices.Sort(gone)
	if len(gone) > 0 {
		remove(gone...)
	}
	return want
}

func (b *binding) promptHandler(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	res, err := b.srv.opts.Prompts.GetPrompt(ctx, req.Params.Name, req.Params.Arguments)
	if err != nil {
		return nil, wireError(err, jsonrpc.CodeInternalError)
	}
	return res, nil
}

func (b *binding) resourceHandler(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	res, err := b.srv.opts.Resources.ReadResource(ctx, req.Params.URI)
	if err != nil {
		return nil, wireError(err, jsonrpc.CodeInternalError)
	}
	return res, nil
}

// safely runs an SDK registration, which panics on input it rejects (a schema that is not an
// object, an invalid URI): one bad item must not take the session down.
func safely(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}
