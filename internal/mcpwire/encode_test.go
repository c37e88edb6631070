package mcpwire

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func mustID(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestEncoderAsSDK: every message encodes as the SDK's EncodeMessage encodes it, and a newline,
// with one Encoder for all of them in turn (a long message before short ones, its buffer reused).
func TestEncoderAsSDK(t *testing.T) {
	big := `{"text":"` + strings.Repeat("x", 2*maxKeptBuffer) + `"}`
	msgs := []struct {
		name string
		msg  jsonrpc.Message
	}{
		{"call", &jsonrpc.Request{ID: mustID(t, float64(3)), Method: "tools/call", Params: []byte(`{"name":"echo","arguments":{"message":"x"}}`)}},
		{"big result", &jsonrpc.Response{ID: mustID(t, float64(1)), Result: []byte(big)}},
		{"string id, html", &jsonrpc.Request{ID: mustID(t, "<a&b>"), Method: "x<y>", Params: []byte(`{"h":"<&>"}`)}},
		{"params with space", &jsonrpc.Request{ID: mustID(t, float64(4)), Method: "m", Params: []byte(" { \"a\" : [ 1 , 2 ] }\n")}},
		{"notification", &jsonrpc.Request{Method: "notifications/initialized"}},
		{"no params", &jsonrpc.Request{ID: mustID(t, float64(5)), Method: "ping"}},
		{"null params", &jsonrpc.Request{ID: mustID(t, float64(5)), Method: "ping", Params: []byte("null")}},
		{"empty method", &jsonrpc.Request{ID: mustID(t, float64(6))}},
		{"result", &jsonrpc.Response{ID: mustID(t, float64(7)), Result: []byte(`{"content":[{"type":"text","text":"Echo: \u003cx\u003e"}]}`)}},
		{"no result", &jsonrpc.Response{ID: mustID(t, float64(8))}},
		{"negative id", &jsonrpc.Response{ID: mustID(t, float64(-9)), Result: []byte(`{}`)}},
		{"wire error", &jsonrpc.Response{ID: mustID(t, float64(10)), Error: &jsonrpc.Error{Code: -32602, Message: "bad <args>", Data: []byte(`{"a":1}`)}}},
		{"plain error", &jsonrpc.Response{ID: mustID(t, "s"), Error: errors.New("no")}},
		{"call after all", &jsonrpc.Request{ID: mustID(t, float64(11)), Method: "tools/call", Params: []byte(`{}`)}},
	}
	var e Encoder
	for _, tc := range msgs {
		want, err := jsonrpc.EncodeMessage(tc.msg)
		if err != nil {
			t.Fatalf("%s: EncodeMessage: %v", tc.name, err)
		}
		got, err := e.Encode(tc.msg)
		if err != nil {
			t.Fatalf("%s: Encode: %v", tc.name, err)
		}
		if diff := cmp.Diff(string(want)+"\n", string(got)); diff != "" {
			t.Errorf("%s: Encode differs from EncodeMessage (-want +got):\n%.2000s", tc.name, diff)
		}
	}
	if e.buf.Cap() > maxKeptBuffer {
		t.Errorf("after a small message the encoder keeps %d bytes, want at most %d", e.buf.Cap(), maxKeptBuffer)
	}
}

// TestEncoderInvalid: a message the SDK cannot encode (params that are not JSON) fails as it
// does, and the encoder encodes the next one.
func TestEncoderInvalid(t *testing.T) {
	bad := &jsonrpc.Request{ID: mustID(t, float64(1)), Method: "m", Params: []byte(`{"a":`)}
	if _, err := jsonrpc.EncodeMessage(bad); err == nil {
		t.Fatal("EncodeMessage encodes invalid params")
	}
	var e Encoder
	if got, err := e.Encode(bad); err == nil {
		t.Fatalf("Encode = %q, want an error", got)
	}
	got, err := e.Encode(&jsonrpc.Request{Method: "ping"})
	if want := `{"jsonrpc":"2.0","method":"ping"}` + "\n"; err != nil || string(got) != want {
		t.Errorf("after a failure Encode = %q, %v; want %q", got, err, want)
	}
}

// The messages of a call, a request and a result, reuse the encoder's buffer: encoding them
// must not allocate (EncodeMessage takes three allocations for each).
func TestEncoderAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector empties sync.Pool at random")
	}
	req := &jsonrpc.Request{ID: mustID(t, float64(1000)), Method: "tools/call", Params: []byte(`{"name":"echo","arguments":{"message":"x"}}`)}
	resp := &jsonrpc.Response{ID: mustID(t, float64(1000)), Result: []byte(`{"content":[{"type":"text","text":"Echo: x"}]}`)}
	var e Encoder
	for _, m := range []jsonrpc.Message{req, resp} {
		if n := testing.AllocsPerRun(100, func() {
			if _, err := e.Encode(m); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("Encode(%T) allocates %v objects, want 0", m, n)
		}
	}
}
