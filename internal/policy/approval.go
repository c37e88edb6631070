package policy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// Sentinel errors of the approval flow.
var (
	// ErrCannotAsk is returned by an Asker that has no one to ask on this surface (a terminal that
	// is not interactive, an MCP client without elicitation). The gate then refuses the call and
	// says how to approve it.
	ErrCannotAsk = errors.New("no one can be asked for approval")
	// ErrUnknownToken: no pending approval has that token (never issued, expired or already used).
	ErrUnknownToken = errors.New("unknown or expired approval token")
)

// ApprovalRequest is one call waiting for a person's decision. Args is the canonical JSON of the
// arguments (keys sorted): exactly what the approval will cover.
type ApprovalRequest struct {
	ToolID   string
	ToolName string
	Source   catalog.Source
	Args     json.RawMessage
	Session  string
	Pattern  string // the tools.approval.require pattern that matched
}

// Decision is a person's answer. An approval covers one call with exactly the requested tool and
// arguments; it is never remembered for a later call.
type Decision struct {
	Approve bool
	Reason  string // optional, shown to the model when the call is refused
}

// Asker asks a person whether a call may run: the CLI prompts on its terminal, the MCP face uses
// elicitation. Ask blocks until the person answers or ctx is done. It returns ErrCannotAsk (wrapped
// or not) when this surface has no way to ask. Implementations must be safe for concurrent use;
// they may serialize their prompts.
type Asker interface {
	Ask(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// Pending is a refused call that a person can approve out of band with its token.
type Pending struct {
	Token   string
	Binding string // hash of session, tool id and canonical arguments
	ToolID  string
	Args    json.RawMessage // canonical
	Session string
	Pattern string
	Expires time.Time
}

// GrantStore keeps pending approvals and granted one-shot approvals. It exists so that an approval
// given out of band (see ApprovalConfig.GrantCommand) reaches the process running the call; a
// store shared between processes carries it across them. Implementations must be safe for
// concurrent use, and TakeGrant must be atomic: two calls racing for one grant cannot both get it.
type GrantStore interface {
	// SavePending records p under p.Token.
	SavePending(ctx context.Context, p Pending) error
	// Grant turns the pending approval with token into one grant for its binding and forgets the
	// token. It returns ErrUnknownToken when there is no such pending approval.
	Grant(ctx context.Context, token string) (Pending, error)
	// TakeGrant consumes one grant for binding and reports whether there was one.
	TakeGrant(ctx context.Context, binding string) (bool, error)
	// List returns the pending approvals that have not expired.
	List(ctx context.Context) ([]Pending, error)
}

// ApprovalConfig configures the approval gate.
type ApprovalConfig struct {
	// Require lists the tools.approval.require patterns: a call to a matching tool needs approval.
	Require []string
	// Asker asks a person; nil means no one can be asked.
	Asker Asker
	// Store keeps out-of-band approvals; nil means an in-memory store.
	Store GrantStore
	// GrantCommand, when set, is the command a person runs with a token to approve a refused call
	// (for example "nodmix approvals grant"). When empty, refusals do not issue tokens. Set it only
	// when the model cannot run that command itself (its shell tools are gated too): the token
	// travels through the model's context.
	GrantCommand string
	// TTL bounds how long a pending approval and a grant stay usable; 0 means one hour.
	TTL time.Duration
	// Exempt names tools the gate never holds, such as the Tool Search control tools whose target
	// calls are gated themselves. Nil exempts nothing.
	Exempt func(*catalog.Tool) bool
	Log    *slog.Logger
}

// ApprovalGate is the dispatch gate for tools.approval.require. It is safe for concurrent use.
type ApprovalGate struct {
	cfg ApprovalConfig
	log *slog.Logger
}

var _ dispatch.Gate = (*ApprovalGate)(nil)

// NewApprovalGate validates cfg and returns the gate.
func NewApprovalGate(cfg ApprovalConfig) (*ApprovalGate, error) {
	if err := validatePatterns("tools.approval.require", cfg.Require); err != nil {
		return nil, err
	}
	if cfg.TTL < 0 {
		return nil, errors.New("approval ttl: must not be negative")
	}
	if cfg.TTL == 0 {
		cfg.TTL = time.Hour
	}
	if cfg.Store == nil {
		cfg.Store = NewMemoryGrants(nil)
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ApprovalGate{cfg: cfg, log: log}, nil
}

// Binding is the identity an approval is bound to: the session, the exact tool id and the
// canonical arguments. Two calls share a binding only if they are the same call.
func Binding(session, toolID string, canonicalArgs []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(session), []byte(toolID), canonicalArgs} {
		var n [8]byte
		for i, l := 0, uint64(len(part)); i < 8; i++ {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:]) // length prefixes keep ("a","bc") and ("ab","c") apart
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Check holds a call that needs approval until it is approved. A grant for exactly this call is
// used first; otherwise the Asker is asked; when no one can be asked the call is refused with a
// message that says how to approve it.
func (g *ApprovalGate) Check(ctx context.Context, call catalog.Call) error {
	t := call.Tool
	if t == nil || (g.cfg.Exempt != nil && g.cfg.Exempt(t)) {
		return nil
	}
	pattern, ok := firstMatch(g.cfg.Require, t)
	if !ok {
		return nil
	}
	canon, err := dispatch.Canonical(call.Args)
	if err != nil {
		return &dispatch.BlockedError{Reason: "approval required, but the arguments are not valid JSON"}
	}
	binding := Binding(call.Session, t.ID, canon)

	granted, err := g.cfg.Store.TakeGrant(ctx, binding)
	if err != nil {
		g.log.Warn("approval store failed; refusing the call", "tool", t.ID, "err", err)
		return &dispatch.BlockedError{Reason: "approval required, and the approval store is unavailable"}
	}
	if granted {
		g.log.Info("approved call runs on a grant", "tool", t.ID, "session", call.Session)
		return nil
	}

	req := ApprovalRequest{ToolID: t.ID, ToolName: t.Name, Source: t.Source, Args: canon, Session: call.Session, Pattern: pattern}
	if g.cfg.Asker != nil {
		dec, err := g.cfg.Asker.Ask(ctx, req)
		switch {
		case err == nil && dec.Approve:
			g.log.Info("call approved", "tool", t.ID, "session", call.Session)
			return nil
		case err == nil:
			reason := "the user denied approval"
			if r := strings.TrimSpace(dec.Reason); r != "" {
				reason += ": " + r
			}
			return &dispatch.BlockedError{Reason: reason}
		case !errors.Is(err, ErrCannotAsk):
			if ctx.Err() != nil {
				return &dispatch.BlockedError{Reason: "approval required, and the wait for it was canceled"}
			}
			g.log.Warn("asking for approval failed; refusing the call", "tool", t.ID, "err", err)
			return &dispatch.BlockedError{Reason: "approval required, and asking for it failed"}
		}
	}
	return g.refuse(ctx, req, binding)
}

// refuse blocks a call no one could approve, saying how to approve it.
func (g *ApprovalGate) refuse(ctx context.Context, req ApprovalRequest, binding string) error {
	base := fmt.Sprintf("approval required (tools.approval.require matches %q) and no one can be asked on this surface.", req.Pattern)
	remove := fmt.Sprintf("To stop requiring approval, remove %q from tools.approval.require.", req.Pattern)
	if g.cfg.GrantCommand == "" {
		return &dispatch.BlockedError{Reason: base + " Run the call from a terminal with the nodmix CLI, which asks there. " + remove}
	}
	p := Pending{
		Token:   newToken(),
		Binding: binding,
		ToolID:  req.ToolID,
		Args:    req.Args,
		Session: req.Session,
		Pattern: req.Pattern,
		Expires: time.Now().Add(g.cfg.TTL),
	}
	if err := g.cfg.Store.SavePending(ctx, p); err != nil {
		g.log.Warn("approval store failed; refusing the call", "tool", req.ToolID, "err", err)
		return &dispatch.BlockedError{Reason: base + " " + remove}
	}
	return &dispatch.BlockedError{Reason: fmt.Sprintf(
		"%s To approve this exact call once, the user runs `%s %s`; then retry it with the same arguments. %s",
		base, g.cfg.GrantCommand, p.Token, remove)}
}

// Grant approves the pending call with token once; the grant expires when the pending approval
// would have (ApprovalConfig.TTL after the refusal).
func (g *ApprovalGate) Grant(ctx context.Context, token string) (Pending, error) {
	return g.cfg.Store.Grant(ctx, strings.TrimSpace(token))
}

// Pending lists the calls waiting for an out-of-band approval.
func (g *ApprovalGate) Pending(ctx context.Context) ([]Pending, error) {
	return g.cfg.Store.List(ctx)
}

// newToken returns an unguessable token a person can type: 16 characters of base32.
func newToken() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}

// MemoryGrants is a GrantStore in memory, for one process. It is safe for concurrent use.
type MemoryGrants struct {
	now func() time.Time

	mu      sync.Mutex
	pending map[string]Pending     // by token
	grants  map[string][]time.Time // by binding: expiry of each unused grant
}

var _ GrantStore = (*MemoryGrants)(nil)

// NewMemoryGrants returns an empty store. now is the clock (nil: time.Now).
func NewMemoryGrants(now func() time.Time) *MemoryGrants {
	if now == nil {
		now = time.Now
	}
	return &MemoryGrants{now: now, pending: map[string]Pending{}, grants: map[string][]time.Time{}}
}

// SavePending records p.
func (m *MemoryGrants) SavePending(_ context.Context, p Pending) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	m.pending[p.Token] = p
	return nil
}

// Grant turns a pending approval into one grant that expires when the pending one would have.
func (m *MemoryGrants) Grant(_ context.Context, token string) (Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	p, ok := m.pending[token]
	if !ok {
		return Pending{}, ErrUnknownToken
	}
	delete(m.pending, token)
	m.grants[p.Binding] = append(m.grants[p.Binding], p.Expires)
	return p, nil
}

// TakeGrant consumes one unexpired grant for binding.
func (m *MemoryGrants) TakeGrant(_ context.Context, binding string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	g := m.grants[binding]
	if len(g) == 0 {
		return false, nil
	}
	if len(g) == 1 {
		delete(m.grants, binding)
	} else {
		m.grants[binding] = g[1:]
	}
	return true, nil
}

// List returns the unexpired pending approvals, oldest expiry first.
func (m *MemoryGrants) List(_ context.Context) ([]Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked()
	out := make([]Pending, 0, len(m.pending))
	for _, p := range m.pending {
		out = append(out, p)
	}
	sortPending(out)
	return out, nil
}

func (m *MemoryGrants) expireLocked() {
	now := m.now()
	for tok, p := range m.pending {
		if !now.Before(p.Expires) {
			delete(m.pending, tok)
		}
	}
	for b, g := range m.grants {
		kept := g[:0]
		for _, exp := range g {
			if now.Before(exp) {
				kept = append(kept, exp)
			}
		}
		if len(kept) == 0 {
			delete(m.grants, b)
		} else {
			m.grants[b] = kept
		}
	}
}

func sortPending(p []Pending) {
	slices.SortFunc(p, func(a, b Pending) int {
		if c := a.Expires.Compare(b.Expires); c != 0 {
			return c
		}
		return strings.Compare(a.Token, b.Token)
	})
}
