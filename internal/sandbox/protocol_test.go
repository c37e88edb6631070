package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHelloLine keeps the child's ready-made hello equal to what encodeMessage writes.
func TestHelloLine(t *testing.T) {
	b, err := encodeMessage(message{Type: msgHello, Version: protocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != helloLine {
		t.Errorf("helloLine = %q, encodeMessage writes %q", helloLine, b)
	}
}

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		line    string
		want    message
		wantErr string
	}{
		{line: `{"type":"hello","version":1}`, want: message{Type: msgHello, Version: 1}},
		{line: `{"type":"hello","version":2}`, wantErr: "hello.version"},
		{line: `{"type":"run","code":"return 1","limits":{"memoryBytes":1,"maxLogBytes":1,"maxResultBytes":1,"maxBridgeCalls":1}}`,
			want: message{Type: msgRun, Code: "return 1", Limits: &wireLimits{1, 1, 1, 1}}},
		{line: `{"type":"run","code":"x"}`, wantErr: "run.limits: required"},
		{line: `{"type":"run","limits":{"memoryBytes":0,"maxLogBytes":1,"maxResultBytes":1,"maxBridgeCalls":1}}`, wantErr: "run.limits"},
		{line: `{"type":"log","line":"a b"}`, want: message{Type: msgLog, Line: "a b"}},
		{line: `{"type":"bridge","id":"1","method":"search","args":{"query":"q"}}`,
			want: message{Type: msgBridge, ID: "1", Method: methodSearch, Args: json.RawMessage(`{"query":"q"}`)}},
		{line: `{"type":"bridge","method":"search","args":{}}`, wantErr: "bridge.id"},
		{line: `{"type":"bridge","id":"1","method":"search"}`, wantErr: "bridge.args"},
		{line: `{"type":"bridge-result","id":"1","ok":true,"value":[1]}`,
			want: message{Type: msgBridgeResult, ID: "1", OK: true, Value: json.RawMessage(`[1]`)}},
		{line: `{"type":"bridge-result","id":"1","ok":true}`, wantErr: "bridge-result.value"},
		{line: `{"type":"bridge-result","id":"1","error":"no"}`, want: message{Type: msgBridgeResult, ID: "1", Error: "no"}},
		{line: `{"type":"wait","seen":3}`, want: message{Type: msgWait, Seen: 3}},
		{line: `{"type":"wait","seen":-1}`, wantErr: "wait.seen"},
		{line: `{"type":"result","ok":true,"value":"v"}`, want: message{Type: msgResult, OK: true, Value: json.RawMessage(`"v"`)}},
		{line: `{"type":"result","ok":false}`, wantErr: "result.error"},
		{line: `{"type":"result","kind":"thrown","error":"Error: boom"}`, want: message{Type: msgResult, Kind: wireThrown, Error: "Error: boom"}},
		{line: `{"type":"exec","cmd":"id"}`, wantErr: "unknown field"},
		{line: `{"type":"exec"}`, wantErr: "unknown message type"},
		{line: `{"type":"log"} {"type":"log"}`, wantErr: "trailing data"},
		{line: `not json`, wantErr: "decode protocol message"},
		{line: ``, wantErr: "decode protocol message"},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			got, err := decodeMessage([]byte(tc.line))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadLine(t *testing.T) {
	tests := []struct {
		name  string
		input string
		max   int
		want  []string
		last  error
	}{
		{"lines", "a\nbb\n\nccc\n", 10, []string{"a", "bb", "", "ccc"}, io.EOF},
		{"unterminated tail is dropped", "a\nb", 10, []string{"a"}, io.EOF},
		{"too long", "abc\nabcdefghijk\n", 5, []string{"abc"}, errMessageTooLarge},
		{"exactly max", "abcde\n", 5, []string{"abcde"}, io.EOF},
		{"longer than the reader's buffer", strings.Repeat("y", 100) + "\n", 200, []string{strings.Repeat("y", 100)}, io.EOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tc.input), 16)
			var got []string
			var err error
			for {
				var line []byte
				if line, err = readLine(r, tc.max); err != nil {
					break
				}
				got = append(got, string(line))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if !errors.Is(err, tc.last) {
				t.Errorf("final error = %v, want %v", err, tc.last)
			}
		})
	}
}

// FuzzDecodeMessage: any line either fails to decode or survives a round trip unchanged.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"type":"bridge","id":"1","method":"call","args":{"id":"x","args":null}}`))
	f.Add([]byte(`{"type":"result","ok":true,"value":{"a":[1,2]}}`))
	f.Add([]byte(`{"type":"log","line":"\u0000\n","truncated":true}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := decodeMessage(line)
		if err != nil {
			return
		}
		b, err := encodeMessage(m)
		if err != nil {
			t.Fatalf("encode decoded message: %v", err)
		}
		if bytes.Count(b, []byte("\n")) != 1 {
			t.Fatalf("encoded message spans lines: %q", b)
		}
		again, err := decodeMessage(b[:len(b)-1])
		if err != nil {
			t.Fatalf("decode re-encoded %q: %v", b, err)
		}
		if diff := cmp.Diff(normalize(m), normalize(again)); diff != "" {
			t.Errorf("round trip (-first +second):\n%s", diff)
		}
	})
}

// normalize compacts raw JSON fields, which encoding/json re-indents on the way out.
func normalize(m message) message {
	compact := func(r json.RawMessage) json.RawMessage {
		var b bytes.Buffer
		if len(r) == 0 || json.Compact(&b, r) != nil {
			return r
		}
		return b.Bytes()
	}
	m.Args, m.Value = compact(m.Args), compact(m.Value)
	return m
}

// FuzzReadLine: lines never contain the separator or exceed the cap, whatever the input.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("a\nbb\n"), 4)
	f.Add([]byte(strings.Repeat("z", 40)+"\n"), 8)
	f.Fuzz(func(t *testing.T, input []byte, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		r := bufio.NewReaderSize(bytes.NewReader(input), 16)
		for {
			line, err := readLine(r, max)
			if err != nil {
				return
			}
			if len(line) > max || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("line %q breaks the contract (max %d)", line, max)
			}
		}
	})
}

// TestChildProtocol drives the child side in-process, so the race detector watches it too.
func TestChildProtocol(t *testing.T) {
	limits := &wireLimits{MemoryBytes: 1 << 40, MaxLogBytes: 1 << 10, MaxResultBytes: 1 << 10, MaxBridgeCalls: 4}
	type step struct {
		send   *message  // parent → child, then
		expect []message // what the child says next
	}
	tests := []struct {
		name  string
		code  string
		steps []step
	}{
		{name: "bridge round trip", code: `const r = await nodmix.tools.search("q", {limit: 2}); console.log("got", r); return r;`,
			steps: []step{
				{expect: []message{
					{Type: msgBridge, ID: "1", Method: methodSearch, Args: json.RawMessage(`{"query":"q","limit":2}`)},
					{Type: msgWait},
				}},
				{send: &message{Type: msgBridgeResult, ID: "1", OK: true, Value: json.RawMessage(`[1]`)}, expect: []message{
					{Type: msgLog, Line: "got [1]"},
					{Type: msgResult, OK: true, Value: json.RawMessage(`[1]`)},
				}},
			}},
		{name: "host error rejects", code: `try { await nodmix.tools.describe("d"); } catch (e) { return e.message; }`,
			steps: []step{
				{expect: []message{{Type: msgBridge, ID: "1", Method: methodDescribe, Args: json.RawMessage(`{"id":"d"}`)}, {Type: msgWait}}},
				{send: &message{Type: msgBridgeResult, ID: "1", Error: "Unknown tool id: d."}, expect: []message{
					{Type: msgResult, OK: true, Value: json.RawMessage(`"Unknown tool id: d."`)},
				}},
			}},
		{name: "wait counts results consumed", code: `await nodmix.tools.call("a", 1); await nodmix.tools.call("b", 2); return 3;`,
			steps: []step{
				{expect: []message{{Type: msgBridge, ID: "1", Method: methodCall, Args: json.RawMessage(`{"id":"a","args":1}`)}, {Type: msgWait}}},
				{send: &message{Type: msgBridgeResult, ID: "1", OK: true, Value: json.RawMessage(`null`)}, expect: []message{
					{Type: msgBridge, ID: "2", Method: methodCall, Args: json.RawMessage(`{"id":"b","args":2}`)}, {Type: msgWait, Seen: 1},
				}},
				{send: &message{Type: msgBridgeResult, ID: "2", OK: true, Value: json.RawMessage(`null`)}, expect: []message{
					{Type: msgResult, OK: true, Value: json.RawMessage(`3`)},
				}},
			}},
		{name: "unknown bridge id from the host", code: `return await nodmix.tools.search("q");`,
			steps: []step{
				{expect: []message{{Type: msgBridge, ID: "1", Method: methodSearch, Args: json.RawMessage(`{"query":"q"}`)}, {Type: msgWait}}},
				{send: &message{Type: msgBridgeResult, ID: "9", OK: true, Value: json.RawMessage(`1`)}, expect: []message{
					{Type: msgResult, Kind: wireInternal, Error: "tool_search_code internal error: unknown bridge call id"},
				}},
			}},
		{name: "syntax error", code: `return (;`, steps: []step{{expect: []message{
			{Type: msgResult, Kind: wireThrown, Error: "SyntaxError: tool_search_code: Line 1:29 Unexpected token ; (and 4 more errors)"},
		}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan int, 1)
			go func() {
				code := serveChild(context.Background(), inR, outW, io.Discard, nil, true)
				outW.Close()
				done <- code
			}()
			out := bufio.NewReader(outR)
			next := func() message {
				t.Helper()
				line, err := readLine(out, 1<<20)
				if err != nil {
					t.Fatalf("read from child: %v", err)
				}
				m, err := decodeMessage(line)
				if err != nil {
					t.Fatalf("child sent %q: %v", line, err)
				}
				return m
			}
			send := func(m message) {
				t.Helper()
				b, _ := encodeMessage(m)
				if _, err := inW.Write(b); err != nil {
					t.Fatalf("write to child: %v", err)
				}
			}
			if m := next(); m.Type != msgHello {
				t.Fatalf("first message = %+v, want hello", m)
			}
			send(message{Type: msgRun, Code: tc.code, Limits: limits})
			for i, s := range tc.steps {
				if s.send != nil {
					send(*s.send)
				}
				var got []message
				for range s.expect {
					got = append(got, next())
				}
				if diff := cmp.Diff(s.expect, got); diff != "" {
					t.Errorf("step %d (-want +got):\n%s", i, diff)
				}
			}
			inW.Close()
			if code := <-done; code != 0 {
				t.Errorf("serveChild = %d, want 0", code)
			}
		})
	}
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		writes  []string
		n       int
		preview string
	}{
		{"empty", 8, nil, 4, ""},
		{"whitespace only", 8, []string{"  \n"}, 4, ""},
		{"fits", 16, []string{"ab", "cd\n"}, 10, "abcd"},
		{"preview cut", 16, []string{"abcdefgh"}, 3, "fgh [5 more bytes not shown]"},
		{"over the cap", 4, []string{"abc", "def"}, 10, "cdef [2 bytes over the 64 KiB stderr cap discarded]"},
		{"one write over the cap", 4, []string{"abcdefg"}, 10, "defg [3 bytes over the 64 KiB stderr cap discarded]"},
		{"utf-8 boundary", 16, []string{"aé"}, 1, "[3 more bytes not shown]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := &tailBuffer{max: tc.max}
			for _, w := range tc.writes {
				if n, err := tb.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := tb.preview(tc.n); got != tc.preview {
				t.Errorf("preview = %q, want %q", got, tc.preview)
			}
		})
	}
}
