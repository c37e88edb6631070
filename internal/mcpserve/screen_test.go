package mcpserve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/nodmix/nodmix/internal/leaktest"
)

const rawInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rpcBody is the JSON-RPC message of an HTTP answer, sent as JSON or as one SSE event.
func rpcBody(body string) string {
	for line := range strings.SplitSeq(body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return data
		}
	}
	return strings.TrimSpace(body)
}

// wireReply is an answer as the client reads it: the id byte for byte.
type wireReply struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func readWireReply(t *testing.T, data string) wireReply {
	t.Helper()
	var r wireReply
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		t.Fatalf("answer %q is not JSON-RPC: %v", data, err)
	}
	return r
}

// rawStdioReply reads the next line that is not a notification.
func (p *stdioPeer) rawReply() string {
	p.t.Helper()
	for {
		line, err := p.out.ReadString('\n')
		if err != nil {
			p.t.Fatalf("reading a reply: %v", err)
		}
		if !strings.Contains(line, `"method"`) {
			return line
		}
	}
}

// faces serves one fresh session on each face and returns how to send it one raw message and
// read the answer; initialized says whether the session is initialized first.
func faces(t *testing.T, initialized bool) map[string]func(msg string) string {
	t.Helper()
	srv := New(newFakeSessions(), Options{})
	t.Cleanup(func() { _ = srv.Close() })
	p := newStdioPeer(t, srv, false)
	ts := httpServer(t, srv)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	url := ts.URL + "/mcp"
	h := map[string]string{}
	if initialized {
		p.send(rawInit)
		p.rawReply()
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		resp, _ := post(t, url, rawInit, nil)
		h = map[string]string{sessionHeader: resp.Header.Get(sessionHeader), "Mcp-Protocol-Version": "2025-11-25"}
		post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	}
	return map[string]func(string) string{
		"stdio": func(msg string) string {
			p.send(msg)
			return p.rawReply()
		},
		"http": func(msg string) string {
			_, body := post(t, url, msg, h)
			return rpcBody(body)
		},
	}
}

// TestInitializeParamsMustBeAnObject: initialize with params that are not an object is refused
// with invalid params (-32602) naming "params" and the rule, with the call's id, on both faces,
// before a session and in one (over HTTP the SDK said it with error code 0, over stdio -32603).
func TestInitializeParamsMustBeAnObject(t *testing.T) {
	leaktest.Check(t)
	for _, initialized := range []bool{false, true} {
		send := faces(t, initialized)
		for _, tt := range []struct{ params, kind string }{
			{`,"params":5`, "a number"},
			{`,"params":[]`, "an array"},
			{`,"params":"x"`, "a string"},
			{`,"params":true`, "a boolean"},
			{`,"params":null`, "null"},
			{``, "missing"},
		} {
			msg := `{"jsonrpc":"2.0","id":7,"method":"initialize"` + tt.params + `}`
			for face, send := range send {
				got := readWireReply(t, send(msg))
				want := `invalid params: "params" of initialize must be an object (it is ` + tt.kind + `)`
				if string(got.ID) != "7" || got.Error == nil || got.Error.Code != jsonrpc.CodeInvalidParams || got.Error.Message != want {
					t.Errorf("%s (initialized %v): %s answered %s %+v, want id 7, code -32602, %q", face, initialized, msg, got.ID, got.Error, want)
				}
			}
		}
	}
}

// TestInexactIDsAreRefused: a request whose id the SDK would change (a fraction, an exponent,
// -0, an integer beyond ±(2^53-1), a string that is not valid text) is refused with invalid
// request (-32600), id null, naming the id and the rule, on both faces; any other id comes back
// byte for byte.
func TestInexactIDsAreRefused(t *testing.T) {
	leaktest.Check(t)
	send := faces(t, true)
	refused := []string{`1.5`, `1.0`, `-0`, `1e3`, `9007199254740993`, `9223372036854775808`,
		`18446744073709551616`, "\"\xff\"", `"\ud800"`}
	kept := []string{`1`, `0`, `-7`, `9007199254740991`, `-9007199254740991`, `"a"`, `"é"`, `"😀"`}
	for face, send := range send {
		for _, id := range refused {
			got := readWireReply(t, send(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`))
			if string(got.ID) != "null" || got.Error == nil || got.Error.Code != jsonrpc.CodeInvalidRequest ||
				!strings.Contains(got.Error.Message, "invalid request: invalid id") || !strings.Contains(got.Error.Message, " id must be ") {
				t.Errorf("%s: ping with id %s answered id %s, error %+v; want id null, -32600 naming the id and the rule", face, id, got.ID, got.Error)
			}
		}
		for _, id := range kept {
			got := readWireReply(t, send(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`))
			if string(got.ID) != id || got.Error != nil {
				t.Errorf("%s: ping with id %s answered id %s, error %+v", face, id, got.ID, got.Error)
			}
		}
	}
	// Before a session, over HTTP: an initialize is refused the same way and opens no session,
	// and so is a batch holding such a request.
	srv := New(newFakeSessions(), Options{})
	ts := httpServer(t, srv)
	for _, body := range []string{
		strings.Replace(rawInit, `"id":1`, `"id":1.5`, 1),
		`[{"jsonrpc":"2.0","id":2e0,"method":"ping"}]`,
		`{"jsonrpc":"1.0","id":1e3,"method":"tools/list"}`, // refused for its version, before a session
	} {
		resp, out := post(t, ts.URL+"/mcp", body, nil)
		got := readWireReply(t, rpcBody(out))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get(sessionHeader) != "" || string(got.ID) != "null" ||
			got.Error == nil || got.Error.Code != jsonrpc.CodeInvalidRequest {
			t.Errorf("%s: answered %d (session %q) %s", body, resp.StatusCode, resp.Header.Get(sessionHeader), out)
		}
	}
}

// TestInitializeFieldsMustHaveTheirTypes: initialize whose params have a field of the wrong type
// is refused with invalid params (-32602) naming the field, its type and the value's, with the
// call's id, on both faces (over HTTP the SDK said it with error code 0, over stdio -32603, both
// quoting the whole params). Keys match exactly, as the SDK's decoder matches them: a key that
// differs in case is ignored, as the SDK ignores it.
func TestInitializeFieldsMustHaveTheirTypes(t *testing.T) {
	leaktest.Check(t)
	refused := []struct{ params, field, want, got string }{
		{`{"protocolVersion":5}`, "protocolVersion", "a string", "a number"},
		{`{"capabilities":"x"}`, "capabilities", "an object", "a string"},
		{`{"clientInfo":[]}`, "clientInfo", "an object", "an array"},
		{`{"clientInfo":{"name":5,"version":"1"}}`, "clientInfo.name", "a string", "a number"},
		{`{"_meta":3}`, "_meta", "an object", "a number"},
		{`{"capabilities":{"roots":{"listChanged":"x"}}}`, "capabilities.roots.listChanged", "a boolean", "a string"},
		{`{"capabilities":{"experimental":[]}}`, "capabilities.experimental", "an object", "an array"},
		{`{"clientInfo":{"name":"c","icons":[{"src":"a"},{"src":1}]}}`, "clientInfo.icons[1].src", "a string", "a number"},
		{`{"clientInfo":{"name":"c","icons":{}}}`, "clientInfo.icons", "an array", "an object"},
		// A repeated key is decoded each time it is written, as the SDK's decoder does.
		{`{"protocolVersion":1,"protocolVersion":"2025-11-25"}`, "protocolVersion", "a string", "a number"},
		{`{"protocol\u0056ersion":true}`, "protocolVersion", "a string", "a boolean"},
	}
	for _, initialized := range []bool{false, true} {
		send := faces(t, initialized)
		for _, tt := range refused {
			msg := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":` + tt.params + `}`
			want := `invalid params: "` + tt.field + `" of initialize must be ` + tt.want + ` (it is ` + tt.got + `)`
			for face, send := range send {
				got := readWireReply(t, send(msg))
				if string(got.ID) != "7" || got.Error == nil || got.Error.Code != jsonrpc.CodeInvalidParams || got.Error.Message != want {
					t.Errorf("%s (initialized %v): %s answered %s %+v, want id 7, code -32602, %q", face, initialized, msg, got.ID, got.Error, want)
				}
			}
		}
	}
	// Fields the SDK ignores or takes as they are: the session starts.
	for _, params := range []string{
		`{"ProtocolVersion":5,"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`,
		`{"protocolVersion":"2025-11-25","capabilities":null,"clientInfo":{"Name":5,"name":"c","version":"1"},"_meta":{"k":[1]}}`,
		`{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"x":5},"roots":null},"clientInfo":{"name":"c","version":"1"},"extra":5}`,
	} {
		for face, send := range faces(t, false) {
			got := readWireReply(t, send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":`+params+`}`))
			if string(got.ID) != "7" || got.Error != nil {
				t.Errorf("%s: initialize with %s answered %s %+v, want a result", face, params, got.ID, got.Error)
			}
		}
	}
}

// TestUnknownNotificationsGetNoAnswer: a notification of a method the SDK does not know gets
// no answer: over HTTP 202 Accepted with no body, before a session and in one (the SDK
// answered a plain-text 400), and a batch goes on without it; over stdio nothing is written.
func TestUnknownNotificationsGetNoAnswer(t *testing.T) {
	leaktest.Check(t)
	srv, url, session := initializedSession(t)
	unknown := []string{
		`{"jsonrpc":"2.0","method":"notifications/whatever"}`,
		`{"jsonrpc":"2.0","method":"x/y","params":{"a":1}}`,
		`{"jsonrpc":"2.0","id":null,"method":"notifications/whatever"}`,
		`{"jsonrpc":"2.0","method":"notifications/what\u0065ver"}`, // read the slow way
	}
	for name, h := range map[string]map[string]string{"no session": nil, "session": session} {
		for _, msg := range unknown {
			resp, body := post(t, url, msg, h)
			if resp.StatusCode != http.StatusAccepted || body != "" || resp.Header.Get(sessionHeader) != "" {
				t.Errorf("%s: %s answered %d %q (session %q), want 202 and no body", name, msg, resp.StatusCode, body, resp.Header.Get(sessionHeader))
			}
		}
	}
	// A batch (2025-03-26) without them: what else it holds is served.
	old := map[string]string{sessionHeader: session[sessionHeader], "Mcp-Protocol-Version": "2025-03-26"}
	for body, want := range map[string]int{
		`[{"jsonrpc":"2.0","method":"notifications/whatever"},{"jsonrpc":"2.0","method":"x"}]`:                                                http.StatusAccepted,
		`[{"jsonrpc":"2.0","method":"notifications/whatever"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}]`: http.StatusAccepted,
		`[{"jsonrpc":"2.0","method":"notifications/whatever"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`:                                      http.StatusOK,
	} {
		resp, out := post(t, url, body, old)
		if resp.StatusCode != want || (want == http.StatusOK && !strings.Contains(out, `"id":3,"result":{}`)) {
			t.Errorf("%s answered %d %q, want %d", body, resp.StatusCode, out, want)
		}
	}
	// Over stdio the SDK ignores them: the next line is the answer to the ping that follows.
	p := newStdioPeer(t, srv, false)
	p.send(rawInit)
	p.rawReply()
	for _, msg := range unknown {
		p.send(msg)
	}
	p.send(`{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	if got := readWireReply(t, p.rawReply()); string(got.ID) != "99" || got.Error != nil {
		t.Errorf("after unknown notifications, stdio answered %s %+v, want the ping's result", got.ID, got.Error)
	}
}

// TestSDKReceives: the methods the SDK's server receives are known, any other name is not.
func TestSDKReceives(t *testing.T) {
	for _, m := range []string{"initialize", "ping", "tools/call", "tools/list", "notifications/initialized",
		"notifications/cancelled", "notifications/progress", "notifications/roots/list_changed", "resources/subscribe"} {
		if !sdkReceives(m) {
			t.Errorf("sdkReceives(%q) = false", m)
		}
	}
	for _, m := range []string{"notifications/whatever", "", "x", "notifications/tools/list_changed", "sampling/createMessage"} {
		if sdkReceives(m) {
			t.Errorf("sdkReceives(%q) = true", m)
		}
	}
}

// TestMalformedRequestsAreRefusedInJSONRPC: a request whose id, method or params has the wrong
// type, or whose method the SDK does not serve, is refused with a JSON-RPC error naming the
// field and the rule, with no Go type in it, alike on both faces (the SDK answered over HTTP
// with a plain-text 400 quoting Go types, over stdio with Go types in its message); in a batch
// the SDK still answers a call of an unknown method on its own, and the others are served.
func TestMalformedRequestsAreRefusedInJSONRPC(t *testing.T) {
	leaktest.Check(t)
	for _, tt := range []struct {
		msg, id string
		code    int64
		want    string
	}{
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, "null", jsonrpc.CodeInvalidRequest, `invalid request: "id" must be a string or a number (it is an object)`},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, "null", jsonrpc.CodeInvalidRequest, `invalid request: "id" must be a string or a number (it is an array)`},
		{`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, "null", jsonrpc.CodeInvalidRequest, `invalid request: "id" must be a string or a number (it is a boolean)`},
		{`{"jsonrpc":"2.0","id":3,"method":5}`, "3", jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a string (it is a number)`},
		{`{"jsonrpc":"2.0","id":3,"method":{"a":1}}`, "3", jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a string (it is an object)`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"x"}`, "3", jsonrpc.CodeInvalidParams, `invalid params: "params" of tools/call must be an object (it is a string)`},
		{`{"jsonrpc":"2.0","id":"k","method":"tools/list","params":[1]}`, `"k"`, jsonrpc.CodeInvalidParams, `invalid params: "params" of tools/list must be an object (it is an array)`},
		{`{"jsonrpc":"2.0","id":3,"method":"t\u006fols/call","params":7}`, "3", jsonrpc.CodeInvalidParams, `invalid params: "params" of tools/call must be an object (it is a number)`},
		{`{"jsonrpc":"2.0","id":3,"method":"nope/nope"}`, "3", jsonrpc.CodeMethodNotFound, `method not found: "nope/nope"`},
		{`{"jsonrpc":"2.0","id":3,"method":"nope/nope","params":"x"}`, "3", jsonrpc.CodeMethodNotFound, `method not found: "nope/nope"`},
	} {
		for face, send := range faces(t, true) {
			got := readWireReply(t, send(tt.msg))
			if string(got.ID) != tt.id || got.Error == nil || got.Error.Code != tt.code || got.Error.Message != tt.want {
				t.Errorf("%s: %s answered id %s %+v, want id %s, %d %q", face, tt.msg, got.ID, got.Error, tt.id, tt.code, tt.want)
			}
		}
	}
	// Over HTTP, in a session: a body that is not JSON is a JSON-RPC parse error, as before one.
	_, url, session := initializedSession(t)
	resp, out := post(t, url, `{"jsonrpc":`, session)
	if got := readWireReply(t, rpcBody(out)); resp.StatusCode != http.StatusBadRequest || string(got.ID) != "null" ||
		got.Error == nil || got.Error.Code != jsonrpc.CodeParseError {
		t.Errorf("a body that is not JSON answered %d %q, want 400 and -32700, id null", resp.StatusCode, out)
	}
	// A batch (2025-03-26): a call with params that are not an object does not fail the others
	// (the SDK answers it in the batch's answer); one of an unknown method fails the batch whole,
	// as the SDK does, but in JSON-RPC.
	old := map[string]string{sessionHeader: session[sessionHeader], "Mcp-Protocol-Version": "2025-03-26"}
	resp, out = post(t, url, `[{"jsonrpc":"2.0","id":4,"method":"ping","params":"x"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`, old)
	if resp.StatusCode != http.StatusOK || !strings.Contains(out, `"id":5,"result":{}`) || !strings.Contains(out, `-32602`) {
		t.Errorf("a batch with bad params answered %d %q, want both calls answered", resp.StatusCode, out)
	}
	resp, out = post(t, url, `[{"jsonrpc":"2.0","id":4,"method":"nope/nope"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`, old)
	if got := readWireReply(t, rpcBody(out)); resp.StatusCode != http.StatusBadRequest || string(got.ID) != "null" ||
		got.Error == nil || got.Error.Code != jsonrpc.CodeMethodNotFound || got.Error.Message != `method not found: "nope/nope"` {
		t.Errorf("a batch with an unknown method answered %d %q, want 400 and -32601, id null", resp.StatusCode, out)
	}
}

// initializedSession starts a server with an HTTP face and an initialized session on it: the
// server, its /mcp URL and the headers the session's requests carry.
func initializedSession(t *testing.T) (*Server, string, map[string]string) {
	t.Helper()
	srv := New(newFakeSessions(), Options{})
	t.Cleanup(func() { _ = srv.Close() })
	ts := httpServer(t, srv)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	url := ts.URL + "/mcp"
	resp, _ := post(t, url, rawInit, nil)
	session := map[string]string{sessionHeader: resp.Header.Get(sessionHeader), "Mcp-Protocol-Version": "2025-11-25"}
	post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	return srv, url, session
}
