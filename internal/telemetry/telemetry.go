// Package telemetry records what happens to tool calls: counters in memory and one JSON Lines
// session log per session under $NODMIX_HOME/logs, each kept to maxLogBytes and one older
// generation. It records sizes and outcomes, never arguments.
package telemetry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/dispatch"
)

// Recorder writes session logs and keeps counters. It is safe for concurrent use.
type Recorder struct {
	dir string
	log *slog.Logger

	maxBytes int64 // a session log longer than this is moved aside to <name>.1 and started anew

	mu        sync.Mutex
	files     map[string]*logFile // open logs by path under dir, at most maxOpenLogs
	stateless map[string]int      // sessions whose lines go to StatelessLog, and how many hold each
	order     []string            // open order, oldest first
	counts    map[string]int      // outcome → calls
	bySource  map[string]int
	bytesIn   int64
	bytesOut  int64
}

var _ dispatch.Observer = (*Recorder)(nil)

// New returns a recorder writing under dir (created on first write); an empty dir keeps counters only.
func New(dir string, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Recorder{dir: dir, log: log, maxBytes: maxLogBytes, files: map[string]*logFile{}, counts: map[string]int{}, bySource: map[string]int{}}
}

// StatelessLog is where, under the recorder's dir, the lines of sessions marked Stateless go:
// a stateless API call is a session of its own that nothing keeps, and a log file each would
// pile up without end on a busy gateway. Its lines carry their session id.
const StatelessLog = "stateless.jsonl"

// Stateless sends the lines of session to StatelessLog until release is called (a turn whose
// transcript is not kept). Marks nest: a session is stateless while any mark holds.
func (r *Recorder) Stateless(session string) (release func()) {
	r.mu.Lock()
	if r.stateless == nil {
		r.stateless = map[string]int{}
	}
	r.stateless[session]++
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			if r.stateless[session]--; r.stateless[session] <= 0 {
				delete(r.stateless, session)
			}
			r.mu.Unlock()
		})
	}
}

// logFile is an open session log and its size as this recorder knows it.
type logFile struct {
	f    *os.File
	size int64
	torn bool // the file does not end in a newline: a write was cut short
}

// maxLogBytes bounds one session log: a long-running gateway's busiest session keeps at most
// this and the one generation before it.
const maxLogBytes = 16 << 20

// maxOpenLogs bounds the session logs kept open between writes; the oldest is closed first.
const maxOpenLogs = 64

// Close closes the open session logs. The recorder still counts afterwards, and reopens logs on
// the next write.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first error
	for _, name := range r.order {
		if err := r.files[name].f.Close(); err != nil && first == nil {
			first = err
		}
	}
	clear(r.files)
	r.order = r.order[:0]
	return first
}

// callLine is one tool call in a session log.
type callLine struct {
	Time        time.Time `json:"time"`
	Type        string    `json:"type"`
	Surface     string    `json:"surface"`
	CallID      string    `json:"call_id"`
	Tool        string    `json:"tool"`
	Name        string    `json:"name,omitempty"`
	Source      string    `json:"source,omitempty"`
	Outcome     string    `json:"outcome"`
	DurationMS  float64   `json:"duration_ms"`
	ArgsBytes   int       `json:"args_bytes"`
	ResultBytes int       `json:"result_bytes"`
}

// Observe implements dispatch.Observer.
func (r *Recorder) Observe(ev dispatch.Event) {
	r.mu.Lock()
	r.counts[ev.Outcome]++
	if ev.Source != "" {
		r.bySource[string(ev.Source)]++
	}
	r.bytesIn += int64(ev.ArgsBytes)
	r.bytesOut += int64(ev.ResultBytes)
	r.mu.Unlock()
	r.Write(ev.Session, callLine{
		Time: ev.Time.UTC(), Type: "call", Surface: clip(ev.Surface), CallID: clip(ev.CallID), Tool: clip(ev.ToolID),
		Name: clip(ev.ToolName), Source: clip(string(ev.Source)), Outcome: clip(ev.Outcome), DurationMS: float64(ev.Duration.Microseconds()) / 1000,
		ArgsBytes: ev.ArgsBytes, ResultBytes: ev.ResultBytes,
	})
}

// maxField bounds a string of a call line: the target of an unknown call is whatever a model or
// client named, of any length.
const maxField = 256

// clip cuts s to at most maxField bytes and a whole rune, marking the cut with "…".
func clip(s string) string {
	if len(s) <= maxField {
		return s
	}
	i := maxField - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// Counters is a snapshot of the counters.
type Counters struct {
	Calls       map[string]int `json:"calls"`      // by outcome
	BySource    map[string]int `json:"by_source"`  // calls by tool source
	ArgsBytes   int64          `json:"args_bytes"` // sum over calls
	ResultBytes int64          `json:"result_bytes"`
}

// Counters returns the current counters.
func (r *Recorder) Counters() Counters {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := Counters{Calls: map[string]int{}, BySource: map[string]int{}, ArgsBytes: r.bytesIn, ResultBytes: r.bytesOut}
	for k, v := range r.counts {
		c.Calls[k] = v
	}
	for k, v := range r.bySource {
		c.BySource[k] = v
	}
	return c
}

// Write appends one JSON line to the session's log. Failures are logged, never returned: telemetry
// must not break a call.
func (r *Recorder) Write(session string, line any) {
	if r.dir == "" {
		return
	}
	b, err := json.Marshal(line)
	if err != nil {
		r.log.Warn("session log: encode", "err", err)
		return
	}
	name := sessionLog(session)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stateless[session] > 0 {
		name = StatelessLog
		b = withSession(b, session)
	}
	b = append(b, '\n')
	lf := r.open(name)
	if lf != nil && lf.size > 0 && lf.size+int64(len(b)) > r.maxBytes {
		r.closeLog(name)
		// Another process may have moved it aside already; then there is nothing to move.
		path := r.path(name)
		if err := os.Rename(path, path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("session log", "err", err)
		}
		lf = r.open(name)
	}
	if lf == nil {
		return
	}
	if lf.torn {
		// After a cut (a full disk), the fragment ends on its own line; this line stays whole.
		b = append([]byte{'\n'}, b...)
	}
	// One write call per line: O_APPEND keeps lines whole even with other writers.
	n, err := lf.f.Write(b)
	lf.size += int64(n)
	lf.torn = n < len(b) && (n > 0 || lf.torn)
	if err != nil {
		r.log.Warn("session log", "err", err)
	}
}

// Remove deletes the log of session and its older generation, as when the session itself is
// deleted. A log that does not exist is not an error.
func (r *Recorder) Remove(session string) error {
	if r.dir == "" {
		return nil
	}
	name := sessionLog(session)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.files[name]; ok {
		r.closeLog(name)
	}
	path := r.path(name)
	var errs []error
	for _, p := range []string{path, path + ".1"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("session log: %w", err)
	}
	return nil
}

// path is where the session log name is kept.
func (r *Recorder) path(name string) string { return filepath.Join(r.dir, name) }

// sessionLog is the log of session, as a path under the recorder's dir.
func sessionLog(session string) string { return "sessions/" + FileName(session) }

// withSession puts "session" first in the JSON object b, for a line of the shared stateless log
// (a line that is not an object becomes its "line").
func withSession(b []byte, session string) []byte {
	k, _ := json.Marshal(session)
	if len(b) < 2 || b[0] != '{' {
		return fmt.Appendf(nil, `{"session":%s,"line":%s}`, k, b)
	}
	out := make([]byte, 0, len(b)+len(k)+12)
	out = append(out, `{"session":`...)
	out = append(out, k...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...)
}

// open returns the session log name, opening it unless it is open; nil (and a warning logged)
// if it cannot be opened. The caller holds r.mu.
func (r *Recorder) open(name string) *logFile {
	if lf, ok := r.files[name]; ok {
		return lf
	}
	path := r.path(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		r.log.Warn("session log", "err", err)
		return nil
	}
	// Read as well, to see whether the last write, maybe another process's, was cut short.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		r.log.Warn("session log", "err", err)
		return nil
	}
	lf := &logFile{f: f}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		lf.size = st.Size()
		last := []byte{0}
		if _, err := f.ReadAt(last, lf.size-1); err == nil && last[0] != '\n' {
			lf.torn = true
		}
	}
	if len(r.order) == maxOpenLogs {
		r.closeLog(r.order[0])
	}
	r.files[name] = lf
	r.order = append(r.order, name)
	return lf
}

// closeLog closes the open session log name; the caller holds r.mu.
func (r *Recorder) closeLog(name string) {
	_ = r.files[name].f.Close()
	delete(r.files, name)
	r.order = slices.DeleteFunc(r.order, func(n string) bool { return n == name })
}

// safeSession reports whether session is a safe file name as it stands: 1 to 80 of
// [A-Za-z0-9_.-], and neither "." nor "..". It runs on every logged call, so it is a loop over
// the bytes rather than a regular expression (whose counted repetition compiled to a large
// program, and took 0.3 ms to compile in every process).
func safeSession(session string) bool {
	if len(session) == 0 || len(session) > 80 || session == "." || session == ".." {
		return false
	}
	for i := 0; i < len(session); i++ {
		c := session[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// FileName is the log file name of a session: the id itself when it is a safe file name, else a
// hash of it, so a client-chosen id can never escape the log directory. An id that looks like a
// hash's name is hashed too, so that no id can choose to share another one's log, and so is one
// with a capital letter: on a file system that ignores case (macOS's, by default) sessions "Chat"
// and "chat" would share one file, and deleting either would delete both logs.
func FileName(session string) string {
	if session == "" {
		session = "default"
	}
	if safeSession(session) && !hashName(session) && !hasUpper(session) {
		return session + ".jsonl"
	}
	sum := sha256.Sum256([]byte(session))
	return fmt.Sprintf("s-%s.jsonl", hex.EncodeToString(sum[:8]))
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// hashName reports whether s has the form of a hashed file name without its extension.
func hashName(s string) bool {
	if len(s) != 18 || s[:2] != "s-" {
		return false
	}
	for i := 2; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
