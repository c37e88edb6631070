package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/nodmix/nodmix/internal/jsondepth"
	"github.com/nodmix/nodmix/internal/leaktest"
	"github.com/nodmix/nodmix/internal/mcpwire"
)

// stdioPeer drives ServeStdio with raw lines, as a misbehaving client would.
type stdioPeer struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Reader
	served chan error
}

// newStdioPeer serves srv to a peer over an in-memory pipe, or with osPipe over an OS pipe, as
// a client that starts `nodmix mcp serve` gives it (read on the SDK's goroutine, see lineConn).
func newStdioPeer(t *testing.T, srv *Server, osPipe bool) *stdioPeer {
	t.Helper()
	var inR io.Reader
	var inW io.WriteCloser
	if osPipe {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		inR, inW = r, w
	} else {
		inR, inW = io.Pipe()
	}
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, out: bufio.NewReader(outR), served: make(chan error, 1)}
	go func() {
		p.served <- srv.ServeStdio(t.Context(), inR, outW)
		_ = outW.Close()
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		if err := <-p.served; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		_ = outR.Close()
	})
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// reply reads the next line, skipping notifications.
func (p *stdioPeer) reply() map[string]any {
	p.t.Helper()
	for {
		line, err := p.out.ReadString('\n')
		if err != nil {
			p.t.Fatalf("reading a reply: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			p.t.Fatalf("reply is not JSON: %q", line)
		}
		if _, isNote := m["method"]; isNote {
			continue
		}
		return m
	}
}

func TestStdioSurvivesBadInput(t *testing.T) {
	t.Run("io.Pipe", func(t *testing.T) { testStdioSurvivesBadInput(t, false) })
	t.Run("os.Pipe", func(t *testing.T) { testStdioSurvivesBadInput(t, true) })
}

func testStdioSurvivesBadInput(t *testing.T, osPipe bool) {
	leaktest.Check(t)
	srv := New(newFakeSessions(), Options{MaxMessageBytes: 512})
	t.Cleanup(func() { _ = srv.Close() })
	p := newStdioPeer(t, srv, osPipe)

	errReply := func(id any, code int64, msg string) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": float64(code), "message": msg}}
	}
	tests := []struct {
		name, line string
		want       map[string]any
	}{
		{"not json", `this is not json`, errReply(nil, jsonrpc.CodeParseError, "parse error: not valid JSON")},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, errReply(nil, jsonrpc.CodeParseError, "parse error: not valid JSON")},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, errReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported")},
		{"no version", `{"id":7,"method":"ping"}`, errReply(float64(7), jsonrpc.CodeInvalidRequest, `invalid request: invalid message version tag ""; expected "2.0"`)},
		{"neither request nor response", `{"jsonrpc":"2.0","id":"x"}`, nil},
		{"too large", `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("x", 600) + `"}}`, errReply(nil, jsonrpc.CodeInvalidRequest, "message too large: over 512 bytes")},
		{"too large over several reads", `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("x", 150<<10) + `"}}`, errReply(nil, jsonrpc.CodeInvalidRequest, "message too large: over 512 bytes")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.send(tt.line)
			if tt.want == nil {
				// A response to nothing: the SDK ignores it; a ping proves the session is alive.
				p.send(`{"jsonrpc":"2.0","id":100,"method":"ping"}`)
				if got := p.reply(); got["id"] != float64(100) || got["error"] != nil {
					t.Errorf("ping after a stray response = %v", got)
				}
				return
			}
			if diff := cmp.Diff(tt.want, p.reply()); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}

	// After all that, a normal session.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if got := p.reply(); got["id"] != float64(1) || got["result"] == nil {
		t.Fatalf("initialize = %v", got)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	got := p.reply()
	res, _ := got["result"].(map[string]any)
	if res == nil || !strings.Contains(mustJSON(t, res), `echo: hi`) {
		t.Errorf("tools/call = %v", got)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`)
	got = p.reply()
	if e, _ := got["error"].(map[string]any); e == nil || e["code"] != float64(jsonrpc.CodeInvalidParams) {
		t.Errorf("tools/call with array arguments = %v", got)
	}
	p.send(`{"jsonrpc":"2.0","id":4,"method":"no/such/method"}`)
	if e, _ := p.reply()["error"].(map[string]any); e == nil || e["code"] != float64(jsonrpc.CodeMethodNotFound) {
		t.Errorf("unknown method: %v", e)
	}
}

// TestStdioLongLine: a message longer than the reader's buffer is put together from several
// reads, whichever way the input is read.
func TestStdioLongLine(t *testing.T) {
	for _, osPipe := range []bool{false, true} {
		srv := New(newFakeSessions(), Options{})
		t.Cleanup(func() { _ = srv.Close() })
		p := newStdioPeer(t, srv, osPipe)
		p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		if got := p.reply(); got["id"] != float64(1) || got["result"] == nil {
			t.Fatalf("initialize = %v", got)
		}
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		long := strings.Repeat("y", 200<<10)
		p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + long + `"}}}`)
		got := p.reply()
		res, _ := got["result"].(map[string]any)
		if res == nil || !strings.Contains(mustJSON(t, res), `echo: `+long) {
			t.Errorf("os pipe %v: tools/call of a long message: %.200v", osPipe, got)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecodeLine(t *testing.T) {
	tests := []struct {
		line string
		ok   bool
		id   string // as the reply has it
		code int64
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, true, "null", 0},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true, "null", 0},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, true, "null", 0},
		{`{"jsonrpc":"1.0","id":"a","method":"x"}`, false, `"a"`, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":9007199254740991,"method":"x"}`, false, `9007199254740991`, jsonrpc.CodeInvalidRequest},
		// An id the reply would not carry as sent is not echoed.
		{`{"jsonrpc":"1.0","id":1e3,"method":"x"}`, false, "null", jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":9007199254740993,"method":"x"}`, false, "null", jsonrpc.CodeInvalidRequest},
		// Nor is the id of a malformed response: it is one of the server's own requests.
		{`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`, false, "null", jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":7,"method":"initialize","params":[]}`, false, "7", jsonrpc.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"x"}`, false, "null", jsonrpc.CodeInvalidRequest},
		{`"just a string"`, false, "null", jsonrpc.CodeInvalidRequest},
		{`{`, false, "null", jsonrpc.CodeParseError},
		{`[]`, false, "null", jsonrpc.CodeInvalidRequest},
	}
	for _, tt := range tests {
		msg, id, code, why := decodeLine([]byte(tt.line))
		if (msg != nil) != tt.ok || mustJSON(t, id) != tt.id || code != tt.code || (msg == nil && why == "") {
			t.Errorf("decodeLine(%s) = %v, %v, %d, %q", tt.line, msg, id, code, why)
		}
	}
}

// TestDecodeLineDepth: JSON nested deeper than the SDK decodes is refused as too deep, not as
// invalid JSON (and not with all of it echoed back); depth is checked first.
func TestDecodeLineDepth(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tooDeep := "invalid request: JSON nested deeper than 1000 levels"
	tests := []struct {
		name, line string
		code       int64
		why        string
	}{
		{"deep valid", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + deep(1001) + `}}`, jsonrpc.CodeInvalidRequest, tooDeep},
		{"deep and truncated", `{"jsonrpc":"2.0","id":1,"params":` + strings.Repeat("{\"a\":", 1001), jsonrpc.CodeInvalidRequest, tooDeep},
		{"brackets in a string", `{"a":"` + strings.Repeat("[", 20000) + `"`, jsonrpc.CodeParseError, "parse error: not valid JSON"},
		{"escaped quote", `{"a":"\"` + strings.Repeat("[", 20000) + `"`, jsonrpc.CodeParseError, "parse error: not valid JSON"},
	}
	for _, tt := range tests {
		msg, _, code, why := decodeLine([]byte(tt.line))
		if msg != nil || code != tt.code || why != tt.why {
			t.Errorf("%s: decodeLine = %v, %d, %q; want %d, %q", tt.name, msg, code, why, tt.code, tt.why)
		}
	}
	// At the limit it is a message, and the SDK decodes its params.
	atLimit := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + deep(998) + `}}`
	if msg, _, _, why := decodeLine([]byte(atLimit)); msg == nil {
		t.Errorf("a message nested 1,000 deep was refused: %s", why)
	}
	if _, err := jsonrpc.DecodeMessage([]byte(atLimit)); err != nil {
		t.Errorf("the SDK refuses a message at the limit: %v", err)
	}
	if _, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + deep(999) + `}}`)); err == nil {
		t.Error("the SDK decodes a message over the limit: maxJSONDepth is out of date")
	}
}

// FuzzDecodeLine checks that every line is either a message or a clear error, never both or
// neither, and never a panic.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1.5e300,"method":""}`,
		`not json`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":"\ud800","method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"method":"initialize","params":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(strings.TrimSpace(string(line))) == 0 {
			return // blank lines are skipped before decoding
		}
		msg, id, code, why := decodeLine(line)
		if (msg == nil) == (code == 0) {
			t.Fatalf("decodeLine(%q) = %v, code %d: want exactly one of a message and an error", line, msg, code)
		}
		if msg == nil && why == "" {
			t.Fatalf("decodeLine(%q): error without a reason", line)
		}
		switch id := id.(type) {
		case nil, string, int64: // the id of a decoded initialize refused for its params
		case json.RawMessage: // as the client wrote it
			if err := mcpwire.CheckID(id); err != nil {
				t.Fatalf("decodeLine(%q): echoes id %s: %v", line, id, err)
			}
		default:
			t.Fatalf("decodeLine(%q): id of type %T", line, id)
		}
		if msg != nil {
			if _, err := jsonrpc.EncodeMessage(msg); err != nil {
				t.Fatalf("decoded message does not encode: %v", err)
			}
		}
	})
}

// FuzzDecodeMessage checks nodmix's message decoder against the SDK's on valid JSON: the same
// messages accepted, but for requests whose id the SDK would change, and encoding to the same
// wire form.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","result":{"a":[1,2]}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"m","data":{"k":1}}}`,
		`{"jsonrpc":"2.0","id":null,"method":""}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x","params":null}`,
		`{"jsonrpc":"2.0","Method":"x","id":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || jsondepth.Deeper(data, maxJSONDepth) {
			return // decodeLine refuses these before decoding
		}
		mine, errMine := decodeMessage(data)
		sdk, errSDK := jsonrpc.DecodeMessage(data)
		if errors.Is(errMine, mcpwire.ErrInexactID) {
			if errSDK != nil {
				t.Fatalf("decode(%s): refused for its id (%v), but the SDK refuses it: %v", data, errMine, errSDK)
			}
			return // the SDK would change its id
		}
		if (errMine == nil) != (errSDK == nil) {
			t.Fatalf("decode(%s): nodmix err %v, SDK err %v", data, errMine, errSDK)
		}
		if errSDK != nil {
			return
		}
		a, err1 := jsonrpc.EncodeMessage(mine)
		b, err2 := jsonrpc.EncodeMessage(sdk)
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Fatalf("decode(%s):\nnodmix %s (%v)\n   SDK %s (%v)", data, a, err1, b, err2)
		}
	})
}

// FuzzLineConn checks how the stdio connection reads any byte stream, read in pieces of 16
// bytes, in both of its ways (a goroutine of its own for a stream, Read itself for an OS pipe):
// the messages it delivers and the error replies it writes are those of each line taken alone.
func FuzzLineConn(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n\n  \nnot json\n"+`{"jsonrpc":"2.0","method":"x"}`), uint16(64))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}`+"\n"+`{"id":2}`), uint16(20))
	f.Add([]byte("[1]\r\n{}\n"+`{"jsonrpc":"2.0","id":"a","result":{}}`), uint16(300))
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		limit := int(max%512) + 1
		wantMsgs, wantReplies := lineModel(data, limit)
		for _, osPipe := range []bool{false, true} {
			msgs, replies, err := readLines(t, data, limit, osPipe)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("os pipe %v: reading ended with %v, want EOF", osPipe, err)
			}
			if diff := cmp.Diff(wantMsgs, msgs); diff != "" {
				t.Fatalf("os pipe %v: messages of %q (-want +got):\n%s", osPipe, data, diff)
			}
			if replies != wantReplies {
				t.Fatalf("os pipe %v: replies to %q:\n got %q\nwant %q", osPipe, data, replies, wantReplies)
			}
		}
	})
}

// lineModel is what the connection makes of data, line by line: the messages (encoded), and
// the replies to the lines that are not messages, as it writes them.
func lineModel(data []byte, limit int) (msgs []string, replies string) {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		switch {
		case len(line) > limit+1: // +1: the newline
			replies += errorLine(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message too large: over %d bytes", limit))
		case len(bytes.TrimSpace(line)) > 0:
			msg, id, code, why := decodeLine(line)
			if msg == nil {
				replies += errorLine(id, code, why)
				break
			}
			enc, err := jsonrpc.EncodeMessage(msg)
			if err != nil {
				panic(err)
			}
			msgs = append(msgs, string(enc))
		}
	}
	return msgs, replies
}

func errorLine(id any, code int64, message string) string {
	data, err := json.Marshal(newErrorResponse(id, code, message))
	if err != nil {
		panic(err)
	}
	return string(data) + "\n"
}

// readLines reads data through a line connection until it ends.
func readLines(t *testing.T, data []byte, limit int, osPipe bool) (msgs []string, replies string, err error) {
	var in io.Reader = bytes.NewReader(data)
	if osPipe {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go func() {
			_, _ = w.Write(data)
			_ = w.Close()
		}()
		in = r
	}
	var out syncBuffer
	// It answers none of the calls it reads, so the end of the input need not wait for answers.
	conn, err := (&lineTransport{in: in, out: &out, max: limit, bufSize: 16, drain: time.Nanosecond}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for {
		msg, err := conn.Read(context.Background())
		if err != nil {
			// The read goroutine has written every reply before reading ended.
			return msgs, out.String(), err
		}
		enc, encErr := jsonrpc.EncodeMessage(msg)
		if encErr != nil {
			t.Fatal(encErr)
		}
		msgs = append(msgs, string(enc))
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
