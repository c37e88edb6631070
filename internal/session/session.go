// Package session holds per-session state that must outlive a request — agent transcripts and
// settings, discovery selections, kept raw outputs — behind one Store interface.
package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/llm"
)

// Store keeps session state. Implementations are safe for concurrent use (a store on a shared
// medium also across processes) and durable to the degree their medium allows; every method is
// atomic (a crash leaves either all or none of it).
//
// A session in the sense of Session, Sessions, Transcript and DeleteSession is one that Append or
// Update created. Selections and blobs may be kept under any session id without creating one: an
// MCP client's session holds selections only and is not listed.
type Store interface {
	// Selected returns the tool names discovery activated in the session, in activation order.
	Selected(ctx context.Context, session string) ([]string, error)
	// AddSelected appends names not yet selected, keeping the order, and returns the ones added.
	// A session keeps its MaxSelected latest selections: the oldest go as more are added.
	AddSelected(ctx context.Context, session string, names []string) ([]string, error)
	// PutBlob keeps data under key for the session (e.g. the raw output behind a compacted result).
	// A persistent store drops old session blobs to bound them; a blob of session "" is the app's
	// own (a server's last tool listing), kept until replaced.
	PutBlob(ctx context.Context, session, key string, data []byte) error
	// Blob returns the data kept under key; ErrNotFound if none.
	Blob(ctx context.Context, key string) ([]byte, error)

	// Session returns the session's row; ErrNotFound if no such session.
	Session(ctx context.Context, key string) (*Info, error)
	// SessionsPage returns up to limit (1 to MaxPage) sessions after the cursor, most recently
	// updated first, then by key, and the cursor of the next page: the zero Cursor when no
	// session follows. A limit out of range wraps ErrInvalidLimit. (AllSessions walks them all.)
	SessionsPage(ctx context.Context, after Cursor, limit int) (page []Info, next Cursor, err error)
	// Transcript returns the session's messages, oldest first; ErrNotFound if no such session.
	Transcript(ctx context.Context, key string) ([]llm.Message, error)
	// Append adds msgs to the transcript atomically, creating the session (base must then be 0).
	// base is the transcript length the caller built on: if the stored length differs, nothing
	// is written and ErrConflict is returned (two turns on one session, maybe on two gateway
	// replicas); when the session no longer exists (removed since the caller read it) the error
	// matches ErrNotFound too, and nothing of the session comes back. The store keeps its own
	// copy of msgs.
	Append(ctx context.Context, key string, base int, msgs []llm.Message) (*Info, error)
	// Update reads the row (a zero Info with Key set when it does not exist), lets fn change
	// Model, Agent, Overrides and Counters, and writes it back in one transaction, creating the
	// session. Inside fn, Overrides and Counters are never nil; changes to other fields are
	// ignored. An error from fn writes nothing and is returned. fn may be called more than once
	// (retries), each time with a fresh read; it must not have side effects nor call the store.
	Update(ctx context.Context, key string, fn func(*Info) error) (*Info, error)
	// DeleteSession removes the session: its row, transcript, discovery selections and blobs.
	// ErrNotFound if no such session (and then nothing is removed).
	DeleteSession(ctx context.Context, key string) error

	Close() error
}

// MaxSelected bounds a session's discovery selections. A search selects a few tools at a time,
// so the bound is met only by a session whose tools keep changing names (a server that names them
// anew on every connection), whose selections would otherwise grow for as long as it lives.
const MaxSelected = 1024

// Info is one session's row. Values returned by a Store are the caller's own; an empty Overrides
// or Counters comes back nil. Times are UTC with microsecond precision.
type Info struct {
	Key       string            `json:"key"`
	Model     string            `json:"model,omitempty"`     // "provider/model" pinned for the session; "" = the agent's default
	Agent     string            `json:"agent,omitempty"`     // agents.list[].id; "" = the defaults
	Overrides map[string]string `json:"overrides,omitempty"` // directive overrides: thinking, fast, verbose, trace, reasoning
	Counters  map[string]int64  `json:"counters,omitempty"`  // cumulative counters the agent keeps (model_calls, input_tokens, …)
	Messages  int               `json:"messages"`            // transcript length
	Created   time.Time         `json:"created"`
	Updated   time.Time         `json:"updated"`
}

// Clone returns a deep copy of i.
func (i *Info) Clone() *Info {
	c := *i
	c.Overrides = cloneMap(i.Overrides)
	c.Counters = cloneMap(i.Counters)
	return &c
}

// cloneMap copies m; an empty map becomes nil.
func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// Errors callers test.
var (
	// ErrNotFound is returned for a key the store does not hold.
	ErrNotFound = errors.New("not found")
	// ErrConflict: Append's base is not the stored transcript length; another turn wrote first.
	ErrConflict = errors.New("session changed since it was read")
	// errRemoved is the ErrConflict of an Append on a session removed since it was read.
	errRemoved = fmt.Errorf("%w: it no longer exists: %w", ErrConflict, ErrNotFound)
	// ErrInvalidKey: a session key that is empty, longer than MaxKeyLen, not UTF-8 or holds a
	// control character (C0, DEL or C1).
	ErrInvalidKey = fmt.Errorf("session key: must be 1 to %d bytes", MaxKeyLen)
)

// MaxKeyLen is the longest session key, in bytes. Keys are otherwise any string: clients choose
// them, and the cap keeps a careless one from bloating every row and index.
const MaxKeyLen = 256

// CheckKey returns an error wrapping ErrInvalidKey unless key is a usable session key. A key
// holds no control character: faces send it back (the gateway in a response header, where one
// breaks the response or is read as a space, naming another session) and print it (where a C1
// control such as U+009B starts a terminal escape).
func CheckKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return fmt.Errorf("%w (got %d)", ErrInvalidKey, len(key))
	}
	if strings.ContainsFunc(key, isControl) {
		return fmt.Errorf("%w, without control characters", ErrInvalidKey)
	}
	if !utf8.ValidString(key) {
		// JSON carries such a key as U+FFFD: a session listed that way could not be named again.
		return fmt.Errorf("%w, in UTF-8", ErrInvalidKey)
	}
	return nil
}

// ConflictError is what Append returns when the stored transcript length is not base: a plain
// ErrConflict, or one matching ErrNotFound too when the session does not exist (any more).
func ConflictError(exists bool) error {
	if exists {
		return ErrConflict
	}
	return errRemoved
}

func isControl(r rune) bool { return r < 0x20 || 0x7f <= r && r <= 0x9f }

// Stamp returns the time a write at now records, given the latest time the store recorded: now in
// UTC to the microsecond (what every store, PostgreSQL included, keeps exactly), and strictly
// after last, so Sessions orders writes as they happened even when the clock is coarse or steps
// back.
func Stamp(now, last time.Time) time.Time {
	t := now.UTC().Truncate(time.Microsecond)
	if !t.After(last) {
		t = last.Add(time.Microsecond).UTC()
	}
	return t
}

// cloneMessages returns a deep copy of msgs: no slice of the copy shares memory with msgs. Empty
// Parts, Args, Raw and Meta become nil, as a store returns them.
func cloneMessages(msgs []llm.Message) []llm.Message {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]llm.Message, len(msgs))
	n := 0
	for _, m := range msgs {
		n += len(m.Parts)
	}
	parts := make([]llm.Part, n) // one allocation for every part
	for i, m := range msgs {
		out[i].Role = m.Role
		if len(m.Parts) == 0 {
			continue
		}
		ps := parts[:len(m.Parts):len(m.Parts)]
		parts = parts[len(m.Parts):]
		for j, p := range m.Parts {
			p.Args = cloneBytes(p.Args)
			p.Raw = cloneBytes(p.Raw)
			p.Meta = cloneBytes(p.Meta)
			ps[j] = p
		}
		out[i].Parts = ps
	}
	return out
}

func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}
