package mcpwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/nodmix/nodmix/internal/jsondepth"
)

var (
	call     = []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp__everything__echo","arguments":{"message":"x"}}}`)
	response = []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: x"}]}}`)
)

// TestDecodeFast: the messages of a call take the fast path, and anything unusual leaves it to
// the standard decoder.
func TestDecodeFast(t *testing.T) {
	for _, tc := range []struct {
		data string
		fast bool
	}{
		{string(call), true},
		{string(response), true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
		{` { "jsonrpc" : "2.0" , "id" : "a-b" , "method" : "ping" , "params" : null } `, true},
		{`{"jsonrpc":"2.0","id":-1.5e3,"result":{"a":"}]\"["},"x":[1,{"y":true}]}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":null}`, true},
		{`{}`, false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`, false},
		{`{"jsonrpc":"2.0","id":"\u0061","method":"x"}`, false},
		{`{"jsonrpc":"2.0","\u0069d":1,"method":"x"}`, false},
		{`{"jsonrpc":"2.0","id":true,"method":"x"}`, false},
		{`{"jsonrpc":"2.0","id":1e400,"method":"x"}`, false},
		{`{"jsonrpc":"1.0","id":1,"method":"x"}`, false},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":null}`, false},
		{`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, false},
		{`"x"`, false},
	} {
		fast, _, ok := decodeFast([]byte(tc.data))
		if ok != tc.fast {
			t.Errorf("decodeFast(%s) took the fast path: %v, want %v", tc.data, ok, tc.fast)
			continue
		}
		if ok {
			slow, _, err := decodeSlow([]byte(tc.data))
			if err != nil || !reflect.DeepEqual(fast, slow) {
				t.Errorf("decodeFast(%s) = %#v, decodeSlow %#v, %v", tc.data, fast, slow, err)
			}
		}
	}
}

// TestDecodeCopies: a decoded message keeps its values when the buffer it came from is reused.
func TestDecodeCopies(t *testing.T) {
	buf := append([]byte(nil), call...)
	msg, err := Decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = ' '
	}
	if got := string(msg.(*jsonrpc.Request).Params); got != `{"name":"mcp__everything__echo","arguments":{"message":"x"}}` {
		t.Errorf("params after the buffer changed: %s", got)
	}
}

func TestDecodeNeither(t *testing.T) {
	if _, err := Decode([]byte(`{"jsonrpc":"2.0","result":{}}`)); !errors.Is(err, ErrNeither) {
		t.Errorf("err = %v", err)
	}
}

// FuzzDecode checks, on valid JSON, that the fast path decodes what the standard decoder does,
// and that Decode accepts what the SDK accepts, to the same wire form.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		string(call),
		string(response),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x","result":{"a":[1,2]}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"m","data":{"k":1}}}`,
		`{"jsonrpc":"2.0","id":null,"method":""}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x","params":null}`,
		`{"jsonrpc":"2.0","Method":"x","id":1}`,
		`{"jsonrpc":"2.0","id":1,"id":"b","method":"x","method":"y"}`,
		`{"jsonrpc":"2.0","id":"\xff","method":"x"}`,
		`{"jsonrpc":"2.0","id":-0,"result":"\\\""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || jsondepth.Deeper(data, 1000) {
			return // the transports refuse these before decoding
		}
		if fast, fastID, ok := decodeFast(data); ok {
			slow, slowID, err := decodeSlow(data)
			if err != nil || !reflect.DeepEqual(fast, slow) || !bytes.Equal(fastID, slowID) {
				t.Fatalf("decode(%s):\nfast %#v\nslow %#v, %v", data, fast, slow, err)
			}
		}
		checkHead(t, data)
		mine, errMine := Decode(data)
		sdk, errSDK := jsonrpc.DecodeMessage(data)
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
		checkExact(t, data, a)
	})
}

// checkHead checks that what ReadHead reads of a message is what Decode decodes, and that
// CheckID of the id it reads says what DecodeExact does.
func checkHead(t *testing.T, data []byte) {
	t.Helper()
	h, ok := ReadHead(data)
	if !ok {
		return
	}
	msg, rawID, err := decode(data)
	if err != nil {
		t.Fatalf("ReadHead(%s) read it, decode refused it: %v", data, err)
	}
	_, errExact := DecodeExact(data)
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !h.IsRequest() || string(h.Method) != m.Method || !bytes.Equal(h.Params, m.Params) ||
			h.IsCall() != m.ID.IsValid() || !bytes.Equal(h.ID, rawID) {
			t.Fatalf("ReadHead(%s) = %+v, decode %#v", data, h, m)
		}
		if h.IsCall() && (CheckID(h.ID) == nil) != (errExact == nil) {
			t.Fatalf("ReadHead(%s): CheckID %v, DecodeExact %v", data, CheckID(h.ID), errExact)
		}
	case *jsonrpc.Response:
		if h.IsRequest() || h.IsCall() || !bytes.Equal(h.Result, m.Result) || !bytes.Equal(h.ID, rawID) {
			t.Fatalf("ReadHead(%s) = %+v, decode %#v", data, h, m)
		}
	}
}

// TestReadHeadAllocatesNothing: screening a message with ReadHead costs no allocation, so that
// a transport can screen what the SDK decodes anyway.
func TestReadHeadAllocatesNothing(t *testing.T) {
	for _, data := range [][]byte{call, response, []byte(`{"jsonrpc":"2.0","id":"a-b","method":"ping"}`)} {
		if n := testing.AllocsPerRun(100, func() {
			if _, ok := ReadHead(data); !ok {
				t.Fatalf("ReadHead(%s) did not read it", data)
			}
		}); n != 0 {
			t.Errorf("ReadHead(%s) allocates %v times", data, n)
		}
	}
}

// checkExact checks that DecodeExact refuses a request only for its id, and that an id it
// accepts comes back from the SDK's encoding as the client wrote it.
func checkExact(t *testing.T, data, encoded []byte) {
	t.Helper()
	msg, err := DecodeExact(data)
	if err != nil && !errors.Is(err, ErrInexactID) {
		t.Fatalf("DecodeExact(%s) = %v, but Decode accepted it", data, err)
	}
	req, isReq := msg.(*jsonrpc.Request)
	if err != nil || !isReq || !req.ID.IsValid() {
		return
	}
	_, sent, _ := decode(data)
	var back struct{ ID json.RawMessage }
	if err := json.Unmarshal(encoded, &back); err != nil {
		t.Fatal(err)
	}
	if sent[0] != '"' {
		if !bytes.Equal(sent, back.ID) {
			t.Fatalf("DecodeExact(%s) accepted id %s, which comes back as %s", data, sent, back.ID)
		}
		return
	}
	var a, b string
	_ = json.Unmarshal(sent, &a)
	_ = json.Unmarshal(back.ID, &b)
	if a != b || !utf8.Valid(sent) {
		t.Fatalf("DecodeExact(%s) accepted id %s, which comes back as %s", data, sent, back.ID)
	}
}

// TestDecodeExact: a request whose id the SDK would change is refused, naming the id and the
// rule; every other message decodes as with Decode.
func TestDecodeExact(t *testing.T) {
	for _, tc := range []struct {
		id    string
		exact bool
	}{
		{`1`, true},
		{`0`, true},
		{`-1`, true},
		{`9007199254740991`, true},
		{`-9007199254740991`, true},
		{`"a"`, true},
		{`""`, true},
		{`"\u0041\n"`, true},
		{`"\ud83d\ude00"`, true},
		{"\"\xef\xbf\xbd\"", true}, // U+FFFD as sent
		{`null`, true},             // a notification
		{`1.5`, false},
		{`1.0`, false},
		{`1e3`, false},
		{`1E3`, false},
		{`-0`, false},
		{`9007199254740992`, false},
		{`9223372036854775808`, false},
		{`18446744073709551616`, false},
		{`-99999999999999999999999999999999999999999`, false},
		{"\"\xff\"", false},
		{`"\ud800"`, false},
		{`"\udc00"`, false},
		{`"\ud800\u0041"`, false},
		{`"\ud800x"`, false},
	} {
		data := []byte(`{"jsonrpc":"2.0","id":` + tc.id + `,"method":"ping"}`)
		msg, err := DecodeExact(data)
		if tc.exact {
			if err != nil {
				t.Errorf("DecodeExact(%s) = %v, want it decoded", data, err)
			}
			continue
		}
		if !errors.Is(err, ErrInexactID) || msg != nil {
			t.Errorf("DecodeExact(%s) = %v, %v; want ErrInexactID", data, msg, err)
			continue
		}
		if !strings.Contains(err.Error(), "id") || !strings.Contains(err.Error(), "must be") {
			t.Errorf("DecodeExact(%s) error %q does not name the id and the rule", data, err)
		}
		// Decode itself keeps reading as the SDK does.
		if _, err := Decode(data); err != nil {
			t.Errorf("Decode(%s) = %v", data, err)
		}
	}
	// A response's id is not the server's to echo: it is left to the SDK to match.
	if _, err := DecodeExact([]byte(`{"jsonrpc":"2.0","id":1.5,"result":{}}`)); err != nil {
		t.Errorf("response with id 1.5: %v", err)
	}
}

func slowOnly(data []byte) (jsonrpc.Message, error) {
	msg, _, err := decodeSlow(data)
	return msg, err
}

func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct {
		name string
		data []byte
		fn   func([]byte) (jsonrpc.Message, error)
	}{
		{"call", call, Decode},
		{"response", response, Decode},
		{"call/exact", call, DecodeExact},
		{"call/standard", call, slowOnly},
		{"response/standard", response, slowOnly},
		{"call/sdk", call, jsonrpc.DecodeMessage},
		{"response/sdk", response, jsonrpc.DecodeMessage},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.fn(bc.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
