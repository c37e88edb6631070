// Package dispatch runs every tool call, from every surface, through one pipeline:
// resolve → policy → approval and hooks → execute → result middleware → telemetry.
package dispatch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/catalog"
)

// Sentinel errors that surfaces test to render their documented messages.
var (
	// ErrUnknownTool: no tool in the run's snapshot has that id or name.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrDenied: the tool exists but policy forbids it for this run.
	ErrDenied = errors.New("tool denied by policy")
)

// Policy decides which tools a run may see and call. Implementations must be safe for concurrent use.
type Policy interface {
	Allowed(t *catalog.Tool) bool
}

// AllowAll is the policy of a run without rules.
type AllowAll struct{}

// Allowed returns true.
func (AllowAll) Allowed(*catalog.Tool) bool { return true }

var _ Policy = AllowAll{}

// Gate inspects an allowed call before it runs: approvals and before-call hooks. A gate that blocks
// returns a *BlockedError; any other error also blocks, with its text as the reason (fail closed).
// Gates must be safe for concurrent use and honour ctx (an approval may wait on a person).
type Gate interface {
	Check(ctx context.Context, call catalog.Call) error
}

// BlockedError stops a call before execution; the model sees the reason.
type BlockedError struct{ Reason string }

func (e *BlockedError) Error() string { return e.Reason }

// Middleware post-processes results (tokenjuice compacts exec/bash output). It must not modify res
// in place; it returns res itself or a new result. An error makes the pipeline pass the
// unprocessed result through (fail open) and log it. Implementations must be safe for concurrent use.
type Middleware interface {
	Process(ctx context.Context, call catalog.Call, res *catalog.Result) (*catalog.Result, error)
}

// Event is what telemetry learns of one call.
type Event struct {
	Time        time.Time
	Session     string
	Surface     string // "mcp", "cli", "tool_call", "tool_search_code", ...
	CallID      string
	ToolID      string
	ToolName    string
	Source      catalog.Source
	Outcome     string // "ok", "error", "blocked", "denied", "unknown", "invalid"
	Duration    time.Duration
	ArgsBytes   int
	ResultBytes int
}

// Observer receives an Event after every call. Observe must not block for long; it is called on
// the caller's goroutine.
type Observer interface {
	Observe(ev Event)
}

// Request is one call as a surface hands it to the pipeline.
type Request struct {
	Target  string          // tool id or model-facing name
	Args    json.RawMessage // must be a JSON object; empty means {}
	Session string
	Surface string
}

// Pipeline is the one path every call takes. Its fields are set at assembly and not modified
// afterwards; a Pipeline is then safe for concurrent use.
type Pipeline struct {
	Policy     Policy
	Gates      []Gate
	Middleware []Middleware
	Observers  []Observer
	Log        *slog.Logger
}

// Resolve finds an allowed tool in the snapshot by id or name.
func (p *Pipeline) Resolve(snap *catalog.Snapshot, target string) (*catalog.Entry, error) {
	e, ok := snap.Lookup(target)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTool, target)
	}
	if p.Policy != nil && !p.Policy.Allowed(&e.Tool) {
		return nil, fmt.Errorf("%w: %s", ErrDenied, e.Tool.ID)
	}
	return e, nil
}

// Call runs one call on the snapshot. It returns ErrUnknownTool or ErrDenied (wrapped) when the
// target cannot be called; every other failure, including a blocked call or an executor error, is a
// result with IsError set that the model reads.
func (p *Pipeline) Call(ctx context.Context, snap *catalog.Snapshot, req Request) (*catalog.Result, error) {
	start := time.Now()
	ev := Event{Time: start, Session: req.Session, Surface: req.Surface, CallID: newCallID(), ArgsBytes: len(req.Args)}
	e, err := p.Resolve(snap, req.Target)
	if err != nil {
		ev.ToolID = req.Target
		ev.Outcome = "unknown"
		if errors.Is(err, ErrDenied) {
			ev.Outcome = "denied"
		}
		p.observe(ev, start)
		return nil, err
	}
	t := &e.Tool
	ev.ToolID, ev.ToolName, ev.Source = t.ID, t.Name, t.Source

	args, err := ObjectArgs(req.Args)
	if err != nil {
		ev.Outcome = "invalid"
		p.observe(ev, start)
		return catalog.ErrorResult(fmt.Sprintf("Invalid arguments for tool %q: %v", t.ID, err)), nil
	}
	call := catalog.Call{Tool: t, Args: args, Session: req.Session, CallID: ev.CallID}

	for _, g := range p.Gates {
		if err := p.check(ctx, g, call); err != nil {
			ev.Outcome = "blocked"
			p.observe(ev, start)
			reason := err.Error()
			if reason == "" {
				reason = "Tool call blocked by policy"
			}
			return catalog.ErrorResult(fmt.Sprintf("Tool %q was blocked before execution: %s", t.ID, reason)), nil
		}
	}

	if ctx.Err() != nil {
		// The caller left while the call waited on its gates: a tool with side effects must not
		// start for a result nobody reads. An executor is not bound to check ctx before it acts.
		ev.Outcome = "blocked"
		p.observe(ev, start)
		return catalog.ErrorResult(fmt.Sprintf("Tool %q was not run: the call was canceled", t.ID)), nil
	}
	res, err := p.execute(ctx, e.Exec, call)
	if err != nil {
		p.log().Warn("tool call failed", "tool", t.ID, "err", err)
		res = catalog.ErrorResult(fmt.Sprintf("Tool %q failed: %v", t.ID, err))
	}
	if res == nil {
		res = &catalog.Result{}
	}
	for _, m := range p.Middleware {
		res = p.process(ctx, m, call, res)
	}
	ev.Outcome = "ok"
	if res.IsError {
		ev.Outcome = "error"
	}
	ev.ResultBytes = resultBytes(res)
	p.observe(ev, start)
	return res, nil
}

// errCrashed is the error of an executor that panicked.
var errCrashed = errors.New("it crashed")

// execute runs the executor of a call. A panic in it becomes the call's error, logged: calls run on
// goroutines of their face (an agent step, an MCP session) where nothing else would catch it,
// and one tool's bug must not end the gateway and every session in it.
func (p *Pipeline) execute(ctx context.Context, ex catalog.Executor, call catalog.Call) (res *catalog.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.log().Error("tool executor panicked", "tool", call.Tool.ID, "panic", fmt.Sprint(r))
			res, err = nil, errCrashed
		}
	}()
	return ex.Execute(ctx, call)
}

// errGateCrashed is the error of a gate that panicked.
var errGateCrashed = errors.New("the check before the call crashed")

// check runs one gate. A panic in it blocks the call (fail closed, like any gate error) instead of
// ending the gateway: gates run on the caller's goroutine, the same as executors.
func (p *Pipeline) check(ctx context.Context, g Gate, call catalog.Call) (err error) {
	defer func() {
		if r := recover(); r != nil {
			p.log().Error("call gate panicked; blocking the call", "tool", call.Tool.ID, "panic", fmt.Sprint(r))
			err = errGateCrashed
		}
	}()
	return g.Check(ctx, call)
}

// process runs one middleware and fails open: on an error or a panic the raw result goes through.
func (p *Pipeline) process(ctx context.Context, m Middleware, call catalog.Call, res *catalog.Result) (out *catalog.Result) {
	defer func() {
		if r := recover(); r != nil {
			p.log().Error("result middleware panicked; passing the raw result", "tool", call.Tool.ID, "panic", fmt.Sprint(r))
			out = res
		}
	}()
	got, err := m.Process(ctx, call, res)
	if err != nil || got == nil {
		if err != nil {
			p.log().Error("result middleware failed; passing the raw result", "tool", call.Tool.ID, "err", err)
		}
		return res
	}
	return got
}

func (p *Pipeline) observe(ev Event, start time.Time) {
	ev.Duration = time.Since(start)
	for _, o := range p.Observers {
		o.Observe(ev)
	}
}

func (p *Pipeline) log() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Log
}

func resultBytes(r *catalog.Result) int {
	n := len(r.Structured)
	for _, c := range r.Content {
		n += len(c.Text) + len(c.Raw)
	}
	return n
}

func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ObjectArgs checks that raw is a JSON object (empty or null means {}) and returns it compacted.
func ObjectArgs(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage(`{}`), nil
	}
	if trimmed[0] != '{' {
		return nil, errors.New("arguments must be a JSON object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if k, ok := repeatedKey(buf.Bytes()); ok {
		// Parsers disagree on a repeated key (Go keeps the last value, others the first): a hook,
		// a policy or an approval could see one value while the executor runs with the other.
		return nil, fmt.Errorf("arguments repeat the key %q: send each key once", k)
	}
	return buf.Bytes(), nil
}

// repeatedKey returns a key that an object anywhere in the valid JSON value raw has twice
// (compared after unescaping).
func repeatedKey(raw []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var walk func() (string, bool)
	walk = func() (string, bool) {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				key, ok := k.(string)
				if err != nil || !ok {
					return "", false
				}
				if seen[key] {
					return key, true
				}
				seen[key] = true
				if k, ok := walk(); ok {
					return k, true
				}
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if k, ok := walk(); ok {
					return k, true
				}
			}
			_, _ = dec.Token()
		}
		return "", false
	}
	return walk()
}

// Canonical returns the canonical JSON form of args (keys sorted, no insignificant space), so an
// approval can be bound to exactly the arguments it was given for. It is also what a person
// approving the call reads, so <, > and & stay as they are rather than HTML escapes.
func Canonical(args json.RawMessage) ([]byte, error) {
	// Decoding turns invalid UTF-8 and lone surrogate escapes into U+FFFD, so distinct arguments
	// would share one canonical form (and one approval) while the executor gets the raw bytes.
	if err := exactText(args); err != nil {
		return nil, err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// exactText reports text in the JSON value raw that decoding would not keep exactly: invalid
// UTF-8, or a \u escape of a surrogate that is not part of a pair.
func exactText(raw []byte) error {
	if !utf8.Valid(raw) {
		return errors.New("arguments are not valid UTF-8")
	}
	// A backslash appears in valid JSON only inside a string, where it starts an escape.
	prevHigh := false
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			if prevHigh {
				return errors.New("arguments hold a lone surrogate escape")
			}
			continue
		}
		if i+1 >= len(raw) {
			return errors.New("arguments end inside an escape")
		}
		if raw[i+1] != 'u' {
			if prevHigh {
				return errors.New("arguments hold a lone surrogate escape")
			}
			i++
			continue
		}
		if i+6 > len(raw) {
			return errors.New("arguments end inside an escape")
		}
		r, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 32)
		if err != nil {
			return fmt.Errorf("arguments hold a bad escape: %w", err)
		}
		switch c := rune(r); {
		case c >= 0xd800 && c < 0xdc00:
			if prevHigh {
				return errors.New("arguments hold a lone surrogate escape")
			}
			prevHigh = true
		case c >= 0xdc00 && c < 0xe000:
			if !prevHigh {
				return errors.New("arguments hold a lone surrogate escape")
			}
			prevHigh = false
		default:
			if prevHigh {
				return errors.New("arguments hold a lone surrogate escape")
			}
		}
		i += 5
	}
	if prevHigh {
		return errors.New("arguments hold a lone surrogate escape")
	}
	return nil
}
