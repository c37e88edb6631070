package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestFirstMessageUsesRunLimits: the first message of a run (its result, or its first bridge
// call) may be as large as the run's limits allow, though the reader started waiting for it
// under the handshake's smaller cap. Warm children are the case that failed.
func TestFirstMessageUsesRunLimits(t *testing.T) {
	for _, warm := range []int{1, -1} {
		p := newTestPool(t, warm)
		tests := []struct {
			name, code string
			size       int // of the value's JSON
		}{
			{"result over the handshake cap", `return "x".repeat(70000);`, 70002},
			{"900 KB result", `return "x".repeat(900000);`, 900002},
			{"900 KB first bridge argument", `const r = await nodmix.tools.call("` + testToolID + `", {blob: "y".repeat(900000)}); return r.input.blob.length;`, len("900000")},
			{"900 KB first search query", `const r = await nodmix.tools.search("q".repeat(900000)); return r.length;`, 1},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				// Copying a megabyte through goja and the bridge under -race on a loaded machine
				// can pass testLimits' 2 s; the deadline here only guards against a hang.
				lim := testLimits()
				lim.Timeout = slack
				res, err := p.Run(context.Background(), tc.code, &fakeBridge{}, lim)
				if err != nil {
					t.Fatalf("Run(%q): %v", tc.code, err)
				}
				if len(res.Value) != tc.size {
					t.Errorf("value has %d bytes, want %d (warm %v)", len(res.Value), tc.size, res.Warm)
				}
			})
		}
	}
}

// TestThrownTextBounded: a thrown error is bounded like a result, with a note, whatever its size.
func TestThrownTextBounded(t *testing.T) {
	p := newTestPool(t, 1)
	tests := []struct {
		name, code string
		maxResult  int
		prefix     string
		total      int // bytes of the full text
	}{
		{"2 MB message", `throw new Error("E".repeat(2e6));`, 0, "Error: EEEE", 2e6 + len("Error: ")},
		{"7 MB message", `throw new Error("E".repeat(7e6));`, 0, "Error: EEEE", 7e6 + len("Error: ")},
		{"rejected promise", `await Promise.reject("R".repeat(3e6));`, 0, "RRRR", 3e6},
		{"small result limit", `throw new Error("é".repeat(5000));`, 1000, "Error: ééé", 10000 + len("Error: ")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lim := testLimits()
			lim.MaxResultBytes = tc.maxResult
			// Building and bounding megabytes of text under the race detector on a busy
			// machine takes seconds; the bound, not the speed, is under test.
			lim.Timeout = 20 * time.Second
			_, err := p.Run(context.Background(), tc.code, &fakeBridge{}, lim)
			ce := codeError(t, err)
			max := tc.maxResult
			if max == 0 {
				max = DefaultMaxResultBytes
			}
			if ce.Kind != KindThrown || len(ce.Message) > max || !utf8.ValidString(ce.Message) {
				t.Fatalf("kind %s, %d bytes (valid UTF-8 %v), want thrown, at most %d", ce.Kind, len(ce.Message), utf8.ValidString(ce.Message), max)
			}
			if !strings.HasPrefix(ce.Message, tc.prefix) {
				t.Errorf("message starts %q, want %q", ce.Message[:20], tc.prefix)
			}
			i := strings.LastIndex(ce.Message, " […truncated: ")
			if i < 0 {
				t.Fatalf("no truncation note at the end of %q", ce.Message[len(ce.Message)-80:])
			}
			if want := " […truncated: " + itoa(i) + " of " + itoa(tc.total) + " bytes shown]"; ce.Message[i:] != want {
				t.Errorf("note %q, want %q", ce.Message[i:], want)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestEmptyThrow(t *testing.T) {
	p := newTestPool(t, 1)
	for _, code := range []string{`throw "";`, `let a = []; let c = a; for (let i = 0; i < 100; i++) { const n = []; c.push(n); c = n; } throw a;`} {
		_, err := p.Run(context.Background(), code, &fakeBridge{}, testLimits())
		if ce := codeError(t, err); ce.Kind != KindThrown || ce.Message != msgEmptyThrow {
			t.Errorf("%s: %s %q, want thrown %q", code, ce.Kind, ce.Message, msgEmptyThrow)
		}
	}
}

// TestDeepValues: a value nested past MaxValueDepth is refused with a limit the model can read,
// not with the encoder's "exceeded max depth" from a dying child.
func TestDeepValues(t *testing.T) {
	p := newTestPool(t, 1)
	nest := func(n int) string {
		return `let a = []; let c = a; for (let i = 1; i < ` + itoa(n) + `; i++) { const n = []; c.push(n); c = n; }`
	}
	res := mustRun(t, p, nest(MaxValueDepth)+` return a;`, &fakeBridge{})
	if got := bytes.Count(res.Value, []byte("[")); got != MaxValueDepth {
		t.Errorf("a value %d deep came back %d deep", MaxValueDepth, got)
	}
	_, err := p.Run(context.Background(), nest(2000)+` return a;`, &fakeBridge{}, testLimits())
	if ce := codeError(t, err); ce.Kind != KindLimit || ce.Message != resultDepthMessage() {
		t.Errorf("deep result: %s %q, want limit %q", ce.Kind, ce.Message, resultDepthMessage())
	}
	b := &fakeBridge{}
	res = mustRun(t, p, nest(2000)+` try { await nodmix.tools.call("`+testToolID+`", a); } catch (e) { return String(e); }`, b)
	if want := `"Error: ` + bridgeArgsDepthMessage() + `"`; string(res.Value) != want {
		t.Errorf("deep bridge arguments: %s, want %s", res.Value, want)
	}
	if b.calls.Load() != 0 {
		t.Error("deep bridge arguments reached the host")
	}
}

// TestInternalFailure: the text of a failure of the sandbox itself goes to the log; the model
// reads the documented message.
func TestInternalFailure(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	detail := "tool_search_code internal error: encode result: json: error calling MarshalJSON for type json.RawMessage: exceeded max depth"
	err := resultError(message{Type: msgResult, Kind: wireInternal, Error: detail}, &Result{}, Limits{MaxResultBytes: 100}, log)
	var want error = &CodeError{Kind: KindInternal, Message: msgInternal}
	if diff := cmp.Diff(want, err, cmp.AllowUnexported(CodeError{})); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "exceeded max depth") {
		t.Errorf("the detail is not in the log: %s", logs.String())
	}
	// The parent bounds thrown text again rather than trust the child.
	err = resultError(message{Type: msgResult, Kind: wireThrown, Error: strings.Repeat("z", 5000)}, &Result{}, Limits{MaxResultBytes: 100}, log)
	if ce := err.(*CodeError); len(ce.Message) > 100 || !strings.Contains(ce.Message, "of 5000 bytes shown") {
		t.Errorf("unbounded thrown text: %q", ce.Message)
	}
}

// TestChildSendsUnencodableResult: a result the encoder refuses still ends the run with a result.
func TestChildSendsUnencodableResult(t *testing.T) {
	var out bytes.Buffer
	w := &childOut{w: bufio.NewWriter(&out)}
	w.send(message{Type: msgResult, OK: true, Value: json.RawMessage(`{"not json`)})
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	m, err := decodeMessage(bytes.TrimSuffix(out.Bytes(), []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	if m.Type != msgResult || m.OK || m.Kind != wireInternal || !strings.HasPrefix(m.Error, "tool_search_code internal error: encode result: ") {
		t.Errorf("sent %+v", m)
	}
}

func TestBoundText(t *testing.T) {
	tests := []struct {
		name, text string
		max        int
		want       string
	}{
		{"short", "boom", 10, "boom"},
		{"exactly max", "0123456789", 10, "0123456789"},
		{"cut with a note", strings.Repeat("a", 100), 60, strings.Repeat("a", 22) + " […truncated: 22 of 100 bytes shown]"},
		{"on a character boundary", strings.Repeat("é", 50), 61, strings.Repeat("é", 11) + " […truncated: 22 of 100 bytes shown]"},
		{"no room for a note", strings.Repeat("b", 100), 10, strings.Repeat("b", 10)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := boundText(tc.text, tc.max)
			if got != tc.want {
				t.Errorf("boundText = %q, want %q", got, tc.want)
			}
			if len(got) > tc.max || !utf8.ValidString(got) {
				t.Errorf("%d bytes (max %d), valid UTF-8 %v", len(got), tc.max, utf8.ValidString(got))
			}
		})
	}
}

// TestReadLineLimitRaisedWhileWaiting: a cap raised after the read began applies to the line.
func TestReadLineLimitRaisedWhileWaiting(t *testing.T) {
	pr, pw := io.Pipe()
	var limit atomic.Int64
	limit.Store(10)
	got := make(chan error, 1)
	go func() {
		line, err := readLineLimit(bufio.NewReaderSize(pr, 16), func() int { return int(limit.Load()) })
		if err == nil && len(line) != 500 {
			err = io.ErrUnexpectedEOF
		}
		got <- err
	}()
	limit.Store(1000)
	if _, err := pw.Write([]byte(strings.Repeat("m", 500) + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Errorf("readLineLimit: %v", err)
	}
}
