// Package mcpserve serves nodmix's catalog as an MCP server over stdio and streamable HTTP, with
// one view of the catalog per client session and a cap on the HTTP sessions open at once.
package mcpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// Sessions opens the per-client view of the catalog: what a client sees and calls depends on the
// exposure mode and, in discovery mode, on what it has activated. Open is called once per MCP
// session (for HTTP, when the client initializes; for stdio, once per Serve) and must be safe for
// concurrent use. The returned Session belongs to mcpserve, which closes it when the MCP session
// ends.
type Sessions interface {
	Open(ctx context.Context, id string) (Session, error)
}

// Session is one client's view. Its methods may be called concurrently.
type Session interface {
	// Tools returns the tools visible now, with model-facing names and schemas.
	Tools() []catalog.Tool
	// Call runs a tool by model-facing name. An error means the call could not be made (unknown
	// or denied tool, bad arguments): the client gets it as a JSON-RPC error, invalid params
	// unless it is a *jsonrpc.Error, which passes through as it is. A failure of the tool itself
	// is a Result with IsError set.
	Call(ctx context.Context, name string, args json.RawMessage) (*catalog.Result, error)
	// Subscribe registers fn to be called whenever Tools changed (activation, a server's
	// list_changed). fn does not block and may be called from any goroutine, also from inside Call.
	Subscribe(fn func()) (cancel func())
	Close() error
}

// ElicitFunc asks the client's user a question through MCP elicitation (form mode): message and
// a flat JSON schema of the answer. It returns the user's action ("accept", "decline" or
// "cancel") and, when accepted, the content. It blocks until the user answers or ctx ends. It is
// an alias so that sessions can implement Elicitor without importing this package.
type ElicitFunc = func(ctx context.Context, message string, schema any) (action string, content map[string]any, err error)

// Elicitor is implemented by a Session that can use elicitation, for approvals of tool calls.
// UseElicitation is called at most once, on the first tools/call of a client that declared the
// elicitation capability; cancel is called when the MCP session ends.
type Elicitor interface {
	UseElicitation(ask ElicitFunc) (cancel func())
}

// ToolWaiter is implemented by a Session whose first tool list may wait for sources that are
// still starting: tools/list calls WaitTools, which returns within a bound of its own or when ctx
// ends, before it answers.
type ToolWaiter interface {
	WaitTools(ctx context.Context)
}

// ToolLister is implemented by a Session whose tool list can fail to be read. On an error the
// client keeps the list it has, and the next tools/list or change tries again; Tools would have
// listed no tools, and the client would have been told that every tool is gone.
type ToolLister interface {
	ListTools() ([]catalog.Tool, error)
}

// ToolAnnotator is implemented by a Session that puts _meta on the tools it lists (nil for none),
// e.g. to mark tools whose server has not connected yet.
type ToolAnnotator interface {
	ToolMeta(t *catalog.Tool) map[string]any
}

// Prompts passes prompts through (the hub implements it, with namespaced names). The values it
// returns are not modified by mcpserve. Implementations must be safe for concurrent use.
type Prompts interface {
	Prompts() []*mcp.Prompt
	GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error)
}

// Resources passes resources and resource templates through (the hub implements it).
// Implementations must be safe for concurrent use.
type Resources interface {
	Resources() []*mcp.Resource
	ResourceTemplates() []*mcp.ResourceTemplate
	ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
}

// Watcher is implemented by a Prompts or Resources value whose lists change; fn is called after
// every change and must not block.
type Watcher interface {
	Subscribe(fn func()) (cancel func())
}

// Options configure a Server. The zero value serves tools only.
type Options struct {
	Name, Version string // how nodmix introduces itself; default "nodmix", "dev"
	Instructions  string
	Log           *slog.Logger // nil: quiet
	Prompts       Prompts      // nil: no prompts capability
	Resources     Resources    // nil: no resources capability
	// MaxMessageBytes caps one incoming message (an HTTP body, a stdio line). Default 4 MiB.
	MaxMessageBytes int
	// SessionTimeout closes HTTP sessions idle for that long, since many clients never end their
	// session themselves. Default 30 minutes; negative keeps sessions until the client ends them.
	SessionTimeout time.Duration
	// MaxSessions caps the HTTP sessions open at once. A new session at the cap evicts the one
	// that has been idle longest (no request in progress; an open event stream alone is idle);
	// when every session is busy, it is refused with 503. Default 1000; negative: no cap.
	// Stdio sessions do not count.
	MaxSessions int
	// SessionID is the id Serve opens its session with; empty means a random one.
	SessionID string
}

// Defaults of Options.
const (
	DefaultMaxMessageBytes = 4 << 20
	DefaultSessionTimeout  = 30 * time.Minute
	DefaultMaxSessions     = 1000
)

// Sentinel errors.
var (
	// ErrClosed is returned by Serve after Close.
	ErrClosed = errors.New("mcp server closed")
	// ErrTooManySessions refuses a new HTTP session when every session under the cap is busy.
	ErrTooManySessions = errors.New("too many MCP sessions")
)

// Server is nodmix as an MCP server. One Server serves any number of stdio connections (Serve)
// and HTTP sessions (Handler). It is safe for concurrent use; Close ends every session and waits
// for the goroutines the Server started.
type Server struct {
	sessions Sessions
	opts     Options
	log      *slog.Logger
	versions []string

	probe *mcp.Server // answers requests outside any session; keeps none

	wg       sync.WaitGroup
	mu       sync.Mutex
	closed   bool
	bindings map[*binding]struct{}
	http     httpSessions
}

// New returns a Server that opens sessions from sessions.
func New(sessions Sessions, opts Options) *Server {
	if opts.Name == "" {
		opts.Name = "nodmix"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	switch {
	case opts.SessionTimeout == 0:
		opts.SessionTimeout = DefaultSessionTimeout
	case opts.SessionTimeout < 0:
		opts.SessionTimeout = 0 // the SDK's "never"
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	s := &Server{
		sessions: sessions,
		opts:     opts,
		log:      opts.Log,
		versions: sessionVersions(),
		bindings: map[*binding]struct{}{},
		http:     httpSessions{byID: map[string]*httpSession{}},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	// The probe never keeps a session: with no session id the SDK closes what it opened for a
	// request when the request ends. An initialize inspect did not recognize (the SDK's decoder
	// reads JSON more leniently) must not leave a session of its own, outside the cap.
	s.probe = mcp.NewServer(s.impl(), &mcp.ServerOptions{Logger: sdkLog(s.log), SupportedProtocolVersions: s.versions,
		GetSessionID: func() string { return "" }})
	return s
}

// sessionVersions are the protocol versions nodmix serves: those with sessions. The stateless
// 2026-07-28 protocol needs per-session state carried by the client (DESIGN §11); until then a
// client asking for it is negotiated down.
func sessionVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			out = append(out, v)
		}
	}
	return out
}

func (s *Server) impl() *mcp.Implementation {
	return &mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}
}

// Serve serves one MCP session over t (for stdio, see ServeStdio) until the client disconnects or
// ctx ends. It returns nil when the session ended normally.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	id := s.opts.SessionID
	if id == "" {
		id = newID()
	}
	b, err := s.newBinding(ctx, id)
	if err != nil {
		return err
	}
	defer b.close()
	var abort func()
	if a, ok := t.(interface{ abort() }); ok {
		abort = a.abort
		b.abortWrites.Store(&abort)
	}
	ss, err := b.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	ended := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = ss.Wait()
		close(ended)
	})
	defer wg.Wait()
	select {
	case <-ended:
	case <-ctx.Done():
		b.stopCalls() // the SDK's Close waits for calls in progress
		if abort != nil {
			abort() // and for the writes of their answers
		}
		_ = ss.Close()
	}
	return nil
}

// Close ends every session and waits for the Server's goroutines. Serve calls in progress
// return; the HTTP handler answers new sessions with an error.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	bs := make([]*binding, 0, len(s.bindings))
	for b := range s.bindings {
		bs = append(bs, b)
	}
	s.mu.Unlock()
	for _, b := range bs {
		b.stopCalls()
		if abort := b.abortWrites.Load(); abort != nil {
			(*abort)() // a stdio client that does not read would hold the close below
		}
		for ss := range b.mcp.Sessions() {
			_ = ss.Close()
		}
	}
	s.wg.Wait()
	for _, b := range bs {
		b.close()
	}
	return nil
}

func (s *Server) register(b *binding) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.bindings[b] = struct{}{}
	return nil
}

func (s *Server) unregister(b *binding) {
	s.mu.Lock()
	delete(s.bindings, b)
	s.mu.Unlock()
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
