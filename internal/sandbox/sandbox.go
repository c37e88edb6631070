package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ChildArg is the argv[1] that makes the nodmix binary run [ChildMain] instead of its CLI.
const ChildArg = "__sandbox"

// Verbatim messages shared with the reference implementation (read "openclaw" as "nodmix").
const (
	msgEmptyCode       = "code must be a non-empty string."
	msgTimedOut        = "tool_search_code timed out"
	msgAborted         = "tool_search_code aborted"
	msgBusy            = "tool_search_code timed out waiting for the sandbox: %d runs were already in progress. Run fewer at once, or use tool_search, tool_describe and tool_call."
	msgSearchQuery     = "search query must be a string."
	msgDescribeID      = "describe id must be a string."
	msgCallID          = "call id must be a string."
	msgUnsupported     = "Unsupported tool_search_code bridge method."
	msgCodeGeneration  = "Code generation from strings disallowed for this context"
	msgNeverSettled    = "tool_search_code promise never settled"
	msgStackOverflow   = "RangeError: Maximum call stack size exceeded"
	msgBridgeBadJSON   = "tool_search_code bridge returned invalid JSON"
	msgBridgePanic     = "tool_search_code bridge failed"
	msgChildExitPrefix = "tool_search_code child exited with "
)

// nodmix's own messages, where the reference has none.
const (
	// msgEmptyThrow replaces the text of a thrown value that converts to "" (throw ""), which
	// would otherwise reach the model as an empty error.
	msgEmptyThrow = "tool_search_code threw a value whose text is empty"
	// msgInternal is what the model reads when the sandbox itself failed on the code (a bug of
	// nodmix, not of the code); the detail goes to nodmix's log, not to the model.
	msgInternal = "tool_search_code internal error: the sandbox failed on this code; nodmix's log has the details"
)

// MaxValueDepth bounds how deeply the JSON of a result or of bridge arguments may nest. JSON
// decoders refuse documents nested past a few thousand levels (Go's at 10,000, Python's at about
// 1,000), and a result travels inside a few more levels of envelope to the client.
const MaxValueDepth = 512

// MaxCodeBytes bounds the code of one run; model-written bridge code is a few hundred bytes.
const MaxCodeBytes = 1 << 20

// Defaults applied by [Limits] for zero fields.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultMemoryBytes    = 256 << 20
	DefaultMaxLogBytes    = 64 << 10
	DefaultMaxResultBytes = 1 << 20
	DefaultMaxBridgeCalls = 64
)

// Bridge serves the sandbox's nodmix.tools calls on the host side.
//
// Calls may arrive concurrently from one run; each gets a context that is cancelled when the run
// ends, and Run waits for every call to return before it returns, so implementations must honour
// ctx. A returned error reaches the code as a rejected promise carrying err.Error(), so it must
// not contain secrets. A nil json.RawMessage is delivered as null.
type Bridge interface {
	Search(ctx context.Context, query string, limit int) (json.RawMessage, error)
	Describe(ctx context.Context, id string) (json.RawMessage, error)
	Call(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error)
}

// Limits bound one run. Zero fields take the Default* values; negative ones are an error.
type Limits struct {
	// Timeout is the wall-clock budget of the run. Time during which the child sits idle waiting
	// for the host to answer bridge calls (approvals, slow tools) is not counted; the ctx given
	// to Run still bounds everything.
	Timeout time.Duration
	// MemoryBytes caps the child's Go heap (values, strings, objects of the code).
	MemoryBytes int64
	// MaxLogBytes caps the console output kept; the rest is dropped and LogsTruncated set.
	MaxLogBytes int
	// MaxResultBytes caps the JSON of the returned value and of each bridge call's arguments.
	MaxResultBytes int
	// MaxBridgeCalls caps nodmix.tools calls per run; exceeding it ends the run.
	MaxBridgeCalls int
}

func (l Limits) withDefaults() (Limits, error) {
	switch {
	case l.Timeout < 0:
		return l, errors.New("sandbox: Limits.Timeout: must not be negative")
	case l.MemoryBytes < 0:
		return l, errors.New("sandbox: Limits.MemoryBytes: must not be negative")
	case l.MaxLogBytes < 0:
		return l, errors.New("sandbox: Limits.MaxLogBytes: must not be negative")
	case l.MaxResultBytes < 0:
		return l, errors.New("sandbox: Limits.MaxResultBytes: must not be negative")
	case l.MaxBridgeCalls < 0:
		return l, errors.New("sandbox: Limits.MaxBridgeCalls: must not be negative")
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = DefaultMemoryBytes
	}
	if l.MaxLogBytes == 0 {
		l.MaxLogBytes = DefaultMaxLogBytes
	}
	if l.MaxResultBytes == 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	if l.MaxBridgeCalls == 0 {
		l.MaxBridgeCalls = DefaultMaxBridgeCalls
	}
	return l, nil
}

// Result is what one run produced. It is also returned, with the logs gathered so far, when the
// run fails with a [*CodeError].
type Result struct {
	// Value is the JSON of the returned value; undefined (or no return) is null.
	Value json.RawMessage
	// Logs holds one entry per console.log/warn/error call, arguments joined by spaces.
	Logs          []string
	LogsTruncated bool
	// BridgeCalls counts the nodmix.tools calls that reached the host.
	BridgeCalls int
	// Duration is the wall time of the run; HostWait the part not charged to Limits.Timeout.
	Duration time.Duration
	HostWait time.Duration
	// Warm reports whether a pre-started child served the run.
	Warm bool
}

// FailureKind classifies a [CodeError].
type FailureKind string

// Failure kinds of a [CodeError].
const (
	KindInvalid      FailureKind = "invalid"       // the code was rejected before it ran
	KindThrown       FailureKind = "thrown"        // the code threw, rejected, or did not parse
	KindTimeout      FailureKind = "timeout"       // Limits.Timeout expired; the child was killed
	KindAborted      FailureKind = "aborted"       // the caller's ctx ended; the child was killed
	KindLimit        FailureKind = "limit"         // memory, bridge call, or result size limit
	KindNeverSettled FailureKind = "never-settled" // the promise could no longer settle
	KindChildExited  FailureKind = "child-exited"  // the child died without a result
	KindInternal     FailureKind = "internal"      // the runtime itself failed on this code
)

// CodeError is a failure of the model's code that the model should see as the tool result, as
// opposed to an infrastructure error (the sandbox could not run at all). Message is safe to show.
type CodeError struct {
	Kind    FailureKind
	Message string
	err     error
}

func (e *CodeError) Error() string { return e.Message }

// Unwrap exposes the cause, e.g. the ctx error of an aborted run.
func (e *CodeError) Unwrap() error { return e.err }

func codeErr(kind FailureKind, format string, args ...any) *CodeError {
	return &CodeError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

var (
	// ErrClosed is returned by a Pool that has been closed.
	ErrClosed = errors.New("sandbox: pool is closed")
	// ErrUnavailable means no sandbox child could be started here; the caller should fall back
	// to the structured Tool Search tools.
	ErrUnavailable = errors.New("sandbox: child process unavailable")
)

func bridgeCapMessage(n int) string {
	return fmt.Sprintf("tool_search_code exceeded %d bridge calls", n)
}

func memoryMessage(limit int64) string {
	return fmt.Sprintf("tool_search_code exceeded memory limit of %d MiB", (limit+(1<<20)-1)>>20)
}

func resultSizeMessage(n int) string {
	return fmt.Sprintf("tool_search_code result exceeded %d bytes", n)
}

func bridgeArgsMessage(n int) string {
	return fmt.Sprintf("tool_search_code bridge arguments exceeded %d bytes", n)
}

func resultDepthMessage() string {
	return fmt.Sprintf("tool_search_code result nests deeper than %d levels", MaxValueDepth)
}

func bridgeArgsDepthMessage() string {
	return fmt.Sprintf("tool_search_code bridge arguments nest deeper than %d levels", MaxValueDepth)
}

// boundText cuts text to at most max bytes, like a result is bounded, ending with a note that
// says how much of it is shown. The cut falls on a character boundary.
func boundText(text string, max int) string {
	if len(text) <= max {
		return text
	}
	note := func(kept int) string {
		return fmt.Sprintf(" […truncated: %d of %d bytes shown]", kept, len(text))
	}
	room := max - len(note(max))
	if room <= 0 {
		return truncateUTF8(text, max)
	}
	kept := truncateUTF8(text, room)
	return kept + note(len(kept))
}
