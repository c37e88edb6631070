package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/mcpwire"
)

// refusal is a message nodmix answers itself, before the SDK reads it, because the SDK would
// answer it wrongly: a request id it would change (the client never matches the reply), or
// initialize params that are not an object or have a field of the wrong type (the SDK says so
// with error code 0 over HTTP, -32603 over stdio).
type refusal struct {
	id      any // the request's id, nil when it cannot be given back as sent
	code    int64
	message string
	// alone: the refusal of a call the SDK answers in its own words (Go types) in a batch's
	// answer: nodmix answers it when it is the body alone, and leaves it to the SDK in a batch,
	// which one such call must not fail whole.
	alone bool
}

// screenMessage returns the refusal of one message, or nil for a message the SDK is to read
// (including one it refuses rightly itself); ignored reports a notification of a method the SDK
// does not know, which gets no answer. data is valid JSON.
func screenMessage(data []byte) (_ *refusal, ignored bool) {
	// Most messages are read without decoding them: the SDK decodes them after this.
	if h, ok := mcpwire.ReadHead(data); ok {
		switch {
		case !h.IsRequest():
			return nil, false
		case !h.IsCall():
			return nil, !sdkReceives(string(h.Method))
		}
		if err := mcpwire.CheckID(h.ID); err != nil {
			return &refusal{code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + err.Error()}, false
		}
		if string(h.Method) != "initialize" {
			// The usual call is let through before callRefusal, whose method would cost the
			// conversion of h.Method an allocation (it escapes into the refusal's message).
			if objectParams(h.Params) && servedMethod(string(h.Method)) {
				return nil, false
			}
			if r := callRefusal(string(h.Method), h.Params); r != nil {
				r.id = json.RawMessage(bytes.Clone(h.ID))
				return r, false
			}
			return nil, false
		}
		if why := initializeParamsError(h.Params); why != "" {
			return &refusal{id: json.RawMessage(bytes.Clone(h.ID)), code: jsonrpc.CodeInvalidParams, message: why}, false
		}
		return nil, false
	}
	msg, err := mcpwire.DecodeExact(data)
	if errors.Is(err, mcpwire.ErrInexactID) {
		return &refusal{code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + err.Error()}, false
	}
	if err != nil {
		return shapeRefusal(data), false
	}
	if req, ok := msg.(*jsonrpc.Request); ok && !req.ID.IsValid() {
		return nil, !sdkReceives(req.Method)
	}
	return screenRequest(msg), false
}

// sdkReceives reports whether method is one of the standard methods the SDK's server receives,
// by the SDK's own table: AddReceivingCustomMethod refuses exactly those names (asked of a server
// made for the question, which serves nothing). The SDK answers a notification of any other
// method over HTTP with a plain-text 400, where JSON-RPC gives a notification no answer and MCP's
// streamable HTTP a POST of notifications 202 Accepted. (Over stdio the SDK ignores it.)
func sdkReceives(method string) bool {
	switch method {
	case "notifications/initialized", "notifications/cancelled", "notifications/progress", "notifications/roots/list_changed":
		return true // what clients send, known without asking
	}
	probe := mcp.NewServer(&mcp.Implementation{Name: "probe"}, nil)
	return mcp.AddReceivingCustomMethod(probe, method, func(context.Context, *mcp.ServerSession, *mcp.PingParams) (*mcp.CallToolResult, error) {
		return nil, nil
	}) != nil
}

// screenRequest returns the refusal of a decoded message, or nil.
func screenRequest(msg jsonrpc.Message) *refusal {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return nil
	}
	if req.Method != "initialize" {
		if r := callRefusal(req.Method, req.Params); r != nil {
			r.id = req.ID.Raw()
			return r
		}
		return nil
	}
	if why := initializeParamsError(req.Params); why != "" {
		return &refusal{id: req.ID.Raw(), code: jsonrpc.CodeInvalidParams, message: why}
	}
	return nil
}

// callRefusal returns the refusal (without its id) of a call other than initialize that the SDK
// would answer in its own words: a method it does not serve (over HTTP a plain-text 400 "JSON
// RPC not handled"; over stdio it says -32601 itself), or params that are not an object (-32602
// quoting Go types). Method not found comes first, as the SDK checks the method first. For a
// call of a usual method with object params, as calls are, it costs a byte compare.
func callRefusal(method string, params []byte) *refusal {
	badParams := !objectParams(params)
	if !badParams && servedMethod(method) {
		return nil
	}
	if !servedMethod(method) && !sdkReceives(method) {
		// In a batch too: the SDK refuses a batch holding it whole, in a plain-text 400.
		return &refusal{code: jsonrpc.CodeMethodNotFound, message: fmt.Sprintf("method not found: %q", method)}
	}
	if !badParams {
		return nil
	}
	// The method is one the SDK serves, so it is safe to name as it is.
	return &refusal{code: jsonrpc.CodeInvalidParams, alone: true,
		message: fmt.Sprintf(`invalid params: "params" of %s must be an object (it is %s)`, method, valueKind(params))}
}

// objectParams reports whether params, valid JSON or absent, are what a call may have: absent,
// null or an object.
func objectParams(params []byte) bool {
	return len(params) == 0 || params[0] == '{' || string(params) == "null"
}

// servedMethod reports, without asking the SDK (see sdkReceives, which builds a server to
// know), whether method is one of the calls clients make most.
func servedMethod(method string) bool {
	switch method {
	case "ping", "tools/call", "tools/list", "prompts/list", "prompts/get", "resources/list",
		"resources/read", "resources/templates/list", "resources/subscribe", "resources/unsubscribe",
		"completion/complete", "logging/setLevel":
		return true
	}
	return false
}

// shapeRefusal returns the refusal of a message the decoder refused because its id or method has
// the wrong type, which the SDK would refuse quoting Go types ("invalid ID type map[string]
// interface {}", "cannot unmarshal number into Go value of type string"), over HTTP in a
// plain-text 400; nil for anything else. data is valid JSON. Keys match exactly, as the
// decoder's (a repeated key counts as its last value).
func shapeRefusal(data []byte) *refusal {
	var keys map[string]json.RawMessage
	if json.Unmarshal(data, &keys) != nil {
		return nil
	}
	id := keys["id"]
	if len(id) > 0 && id[0] != '"' && id[0] != 'n' && valueKind(id) != "a number" {
		return &refusal{code: jsonrpc.CodeInvalidRequest,
			message: fmt.Sprintf(`invalid request: "id" must be a string or a number (it is %s)`, valueKind(id))}
	}
	if m, ok := keys["method"]; ok && m[0] != '"' {
		return &refusal{id: echoID(id), code: jsonrpc.CodeInvalidRequest,
			message: fmt.Sprintf(`invalid request: "method" must be a string (it is %s)`, valueKind(m))}
	}
	return nil
}

// initializeParamsError says why the params of an initialize call are refused, or "". The MCP
// specification requires them (protocolVersion, capabilities, clientInfo), as an object whose
// fields have their types.
func initializeParamsError(params json.RawMessage) string {
	p := bytes.TrimSpace(params)
	kind := "missing"
	if len(p) > 0 {
		if p[0] == '{' {
			return initializeFieldError(p)
		}
		kind = valueKind(p)
	}
	return fmt.Sprintf(`invalid params: %q of initialize must be an object (it is %s)`, "params", kind)
}

// screened is what screenBody makes of an HTTP body.
type screened struct {
	refusal *refusal // the body's refusal, or nil
	// ignored: the body holds notifications of methods the SDK does not know (see
	// sdkReceives) and nothing else; keep, for a batch holding such notifications and more,
	// is the batch without them.
	ignored bool
	keep    []byte
}

// screenBody screens an HTTP body, one message or a batch of them. data is valid JSON. A batch
// is refused whole (with no id) when one of its messages is.
func screenBody(data []byte) screened {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '[' {
		r, ignored := screenMessage(data)
		return screened{refusal: r, ignored: ignored}
	}
	var batch []json.RawMessage
	if json.Unmarshal(data, &batch) != nil {
		return screened{}
	}
	kept := batch[:0:0]
	for _, raw := range batch {
		r, ignored := screenMessage(raw)
		if r != nil && r.alone {
			r = nil // the SDK answers it, in the batch's answer
		}
		if r != nil {
			r.id = nil
			return screened{refusal: r}
		}
		if !ignored {
			kept = append(kept, raw)
		}
	}
	switch {
	case len(kept) == len(batch):
		return screened{}
	case len(kept) == 0:
		return screened{ignored: true}
	}
	keep := []byte{'['}
	for i, raw := range kept {
		if i > 0 {
			keep = append(keep, ',')
		}
		keep = append(keep, raw...)
	}
	return screened{keep: append(keep, ']')}
}

// echoID is the id to answer a message refused by nodmix with: its id as the client wrote it,
// when it is a string or a number that the client gets back unchanged, else nil (JSON null).
func echoID(raw json.RawMessage) any {
	if mcpwire.CheckID(raw) != nil {
		return nil
	}
	return raw
}
