package mcphub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/jsondepth"
	"github.com/nodmix/nodmix/internal/mcpwire"
)

// connTransport hands out one ready connection.
type connTransport struct{ c mcp.Connection }

func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// TestStreamConnWithSDKServer runs a session of the SDK's client and server over streamConn:
// calls both ways (the server pings the client) and a notification; the client reads the server
// through an in-memory pipe (on a goroutine of its own) and through an OS pipe (in Read).
func TestStreamConnWithSDKServer(t *testing.T) {
	t.Run("io.Pipe", func(t *testing.T) {
		r, w := io.Pipe()
		testStreamConnWithSDKServer(t, r, w)
	})
	t.Run("os.Pipe", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		testStreamConnWithSDKServer(t, r, w)
	})
}

func testStreamConnWithSDKServer(t *testing.T, toClientR io.ReadCloser, toClientW io.WriteCloser) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "srv", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := req.Session.Ping(ctx, nil); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	toServerR, toServerW := io.Pipe()
	ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: toServerR, Writer: toClientW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	conn := newStreamConn(toClientR, toServerW, closerFunc(func() error {
		_ = toClientR.Close()
		return toServerW.Close()
	}))
	cs, err := client.Connect(ctx, connTransport{conn}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != `{"a":1}` {
		t.Errorf("echo = %q", got)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Error("unknown tool: no error")
	}
	srv.AddTool(&mcp.Tool{Name: "more", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed")
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	_ = ss.Wait()
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// readAll reads messages until an error.
func readAll(c *streamConn) ([]jsonrpc.Message, error) {
	var out []jsonrpc.Message
	for {
		m, err := c.Read(context.Background())
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}

func TestStreamConnFraming(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int    // messages read before the error
		err      string // "" for io.EOF
	}{
		{"lines", "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n", 2, ""},
		{"a value over several lines", "{\"jsonrpc\":\"2.0\",\n \"method\":\"a\"}\n", 1, ""},
		{"two values on a line", `{"jsonrpc":"2.0","method":"a"} {"jsonrpc":"2.0","method":"b"}` + "\n", 0, "invalid trailing data at the end of stream"},
		{"not JSON", "this is not JSON-RPC\n", 0, "invalid character"},
		{"no version", `{"id":1,"result":{}}` + "\n", 0, `invalid message version tag ""`},
		{"neither", `{"jsonrpc":"2.0","result":{}}` + "\n", 0, "invalid request"},
		{"empty batch", "[]\n", 0, "empty batch"},
		{"null", "null\n", 0, "empty batch"},
		{"too deep", `{"jsonrpc":"2.0","method":"a","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + "}\n", 0, "exceeded maximum nesting depth of 1000"},
		{"batch", `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]` + "\n", 2, ""},
	} {
		for _, src := range streamSources {
			t.Run(tc.name+"/"+src.name, func(t *testing.T) {
				c := newStreamConn(src.open(t, tc.in), io.Discard, closerFunc(func() error { return nil }))
				defer c.Close()
				msgs, err := readAll(c)
				if len(msgs) != tc.n {
					t.Errorf("read %d messages, want %d", len(msgs), tc.n)
				}
				if tc.err == "" {
					if !errors.Is(err, io.EOF) {
						t.Errorf("err = %v, want EOF", err)
					}
				} else if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want %q", err, tc.err)
				}
			})
		}
	}
}

// streamSources are the two ways streamConn reads: a stream it reads on a goroutine of its own,
// and an OS pipe (what a server's stdout is), which Read reads itself.
var streamSources = []struct {
	name string
	open func(t *testing.T, data string) io.Reader
}{
	{"reader", func(_ *testing.T, data string) io.Reader { return strings.NewReader(data) }},
	{"pipe", func(t *testing.T, data string) io.Reader {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		go func() {
			_, _ = io.WriteString(w, data)
			_ = w.Close()
		}()
		return r
	}},
}

// TestStreamConnBatchAnswers checks that the responses to a batch of requests go out as one
// batch once all are in, as the SDK's connection sends them.
func TestStreamConnBatchAnswers(t *testing.T) {
	in := `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"x","method":"b"}]` + "\n"
	outR, outW := io.Pipe()
	c := newStreamConn(strings.NewReader(in), outW, closerFunc(outW.Close))
	defer c.Close()
	var reqs []*jsonrpc.Request
	for range 3 {
		m, err := c.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) != 2 {
		t.Fatalf("%d calls", len(reqs))
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(outR).ReadString('\n')
		lines <- line
	}()
	// Answered in reverse order; the batch keeps the order of the requests.
	for i := len(reqs) - 1; i >= 0; i-- {
		if err := c.Write(t.Context(), &jsonrpc.Response{ID: reqs[i].ID, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	want := `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"x","result":{}}]` + "\n"
	if got := <-lines; got != want {
		t.Errorf("batch answer = %s, want %s", got, want)
	}
}

func TestStreamConnCloseEndsRead(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	c := newStreamConn(r, io.Discard, closerFunc(func() error { return nil }))
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	_ = c.Close()
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Errorf("read after close: %v", err)
	}
	_ = r.Close() // ends the read goroutine
}

// pipeConn is a stream connection that reads an OS pipe, which Read reads itself, and the
// pipe's writer; the test's cleanup closes both ends.
func pipeConn(t *testing.T) (*streamConn, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return newStreamConn(r, io.Discard, closerFunc(func() error { return nil })), w
}

// TestStreamConnCloseEndsPipeRead: Close ends a read of an OS pipe that Read waits in itself,
// with the end of the stream, whether the read is in progress or comes after, and while the
// pipe's writer still holds it open.
func TestStreamConnCloseEndsPipeRead(t *testing.T) {
	c, w := pipeConn(t)
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","method":"a"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Read(t.Context()); err != nil || m.(*jsonrpc.Request).Method != "a" {
		t.Fatalf("read = %v, %v", m, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // most likely waiting in the read by now; either way works
	_ = c.Close()
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Errorf("read ended by close: %v", err)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("read after close: %v", err)
	}
}

// TestStreamConnPipeReadWithContext: a Read that its context may end, on a pipe that Read
// would otherwise read itself, ends with the context and loses nothing from the stream.
func TestStreamConnPipeReadWithContext(t *testing.T) {
	c, w := pipeConn(t)
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read = %v, want the context's end", err)
	}
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","method":"b"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Read(context.Background()); err != nil || m.(*jsonrpc.Request).Method != "b" {
		t.Fatalf("read = %v, %v", m, err)
	}
}

// FuzzDecodeMessage checks the hub's message decoder against the SDK's on valid JSON: the same
// messages accepted, and encoding to the same wire form.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping","params":{}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"m","data":{"k":1}}}`,
		`{"jsonrpc":"2.0","id":null,"method":""}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x","params":null}`,
		`{"jsonrpc":"2.0","Method":"x","id":1}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":null,"result":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || jsondepth.Deeper(data, maxJSONDepth) {
			return // the stream decoder and decodeBatch refuse these first
		}
		mine, errMine := decodeMessage(data)
		sdk, errSDK := jsonrpc.DecodeMessage(data)
		if errors.Is(errMine, mcpwire.ErrInexactID) {
			return // refused for the id the SDK would change (see TestServerRequestIDsComeBackAsWritten)
		}
		if (errMine == nil) != (errSDK == nil) {
			t.Fatalf("decode(%s): nodmix err %v, SDK err %v", data, errMine, errSDK)
		}
		if errSDK != nil {
			var wire *jsonrpc.Error
			if errors.As(errSDK, &wire) && !errors.Is(errMine, wire) {
				t.Fatalf("decode(%s): nodmix err %v, SDK err %v (code %d)", data, errMine, errSDK, wire.Code)
			}
			return
		}
		a, err1 := jsonrpc.EncodeMessage(mine)
		b, err2 := jsonrpc.EncodeMessage(sdk)
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Fatalf("decode(%s):\nnodmix %s (%v)\n   SDK %s (%v)", data, a, err1, b, err2)
		}
	})
}

// FuzzStreamConn checks the connection's reading against the SDK's on any byte stream: the
// same messages in the same order, then an end of the same kind (the stream's end, or an error
// — whose wording may differ when a value is not a message).
func FuzzStreamConn(f *testing.F) {
	msg := `{"jsonrpc":"2.0","id":1,"result":{}}`
	for _, s := range []string{
		msg + "\n" + msg + "\r\n",
		"\n \n" + msg,
		msg + "  \n",
		msg + "\r\r\n" + msg,
		"{\"jsonrpc\":\"2.0\",\n\"method\":\"a\"}\n" + msg + "\n",
		msg + msg + "\n",
		msg + " " + msg + "\n",
		msg + "\rx\n",
		`[` + msg + `,` + msg + `]` + "\n",
		"1\n2",
		`"a"` + "\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"\n\"}}\n",
		msg[:10],
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sdkConn, err := (&mcp.IOTransport{Reader: io.NopCloser(bytes.NewReader(data)), Writer: nopWriteCloser{io.Discard}}).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer sdkConn.Close()
		mine := newStreamConn(bytes.NewReader(data), io.Discard, closerFunc(func() error { return nil }))
		defer mine.Close()
		// The same stream through an OS pipe, which Read reads itself (with a context that
		// cannot end, as the SDK's).
		pipe := newStreamConn(streamSources[1].open(t, string(data)), io.Discard, closerFunc(func() error { return nil }))
		defer pipe.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		for i := 0; ; i++ {
			a, errA := mine.Read(ctx)
			b, errB := sdkConn.Read(ctx)
			if ctx.Err() != nil {
				t.Fatalf("%q: message %d: no end (nodmix %v, SDK %v)", data, i, errA, errB)
			}
			if (errA == nil) != (errB == nil) || (errA != nil && errors.Is(errA, io.EOF) != errors.Is(errB, io.EOF)) {
				t.Fatalf("%q: message %d: nodmix %v, %v; SDK %v, %v", data, i, a, errA, b, errB)
			}
			c, errC := pipe.Read(context.Background())
			if (errA == nil) != (errC == nil) || (errA != nil && errA.Error() != errC.Error()) {
				t.Fatalf("%q: message %d: read %v, %v; through a pipe %v, %v", data, i, a, errA, c, errC)
			}
			if errA != nil {
				return
			}
			ea, _ := jsonrpc.EncodeMessage(a)
			eb, _ := jsonrpc.EncodeMessage(b)
			ec, _ := jsonrpc.EncodeMessage(c)
			if string(ea) != string(eb) || string(ea) != string(ec) {
				t.Fatalf("%q: message %d: nodmix %s, through a pipe %s, SDK %s", data, i, ea, ec, eb)
			}
		}
	})
}

// waitingListings is how many of the hub's tools/list calls wait for their results.
func (c *streamConn) waitingListings() int {
	if c.listed.Load() {
		return 1
	}
	return 0
}

// TestStreamConnKeepsOneListing: the hub lists one page at a time, so a tools/list that got no
// answer (its context ended) is forgotten when the next is written, and one whose write failed
// at once; before, each stayed for the connection's life, and every message read took a lock.
func TestStreamConnKeepsOneListing(t *testing.T) {
	c := newStreamConn(strings.NewReader(""), io.Discard, closerFunc(func() error { return nil }))
	list := func(id int64) *jsonrpc.Request {
		rid, err := jsonrpc.MakeID(float64(id))
		if err != nil {
			t.Fatal(err)
		}
		return &jsonrpc.Request{ID: rid, Method: "tools/list"}
	}
	for id := range int64(3) {
		if err := c.Write(context.Background(), list(id)); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.waitingListings(); n != 1 {
		t.Errorf("%d listings waiting after three unanswered ones, want the last", n)
	}
	c.abortWrites()
	if err := c.Write(context.Background(), list(9)); err == nil {
		t.Fatal("a write after abortWrites succeeded")
	}
	if n := c.waitingListings(); n != 0 {
		t.Errorf("%d listings waiting after a listing whose write failed, want none", n)
	}
}
