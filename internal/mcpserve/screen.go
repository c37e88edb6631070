package mcpserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

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
}

// screenMessage returns the refusal of one message, or nil for a message the SDK is to read
// (including one it refuses rightly itself). data is valid JSON.
func screenMessage(data []byte) *refusal {
	msg, err := mcpwire.DecodeExact(data)
	if errors.Is(err, mcpwire.ErrInexactID) {
		return &refusal{code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + err.Error()}
	}
	if err != nil {
		return nil
	}
	return screenRequest(msg)
}

// screenRequest returns the refusal of a decoded message, or nil.
func screenRequest(msg jsonrpc.Message) *refusal {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "initialize" || !req.ID.IsValid() {
		return nil
	}
	if why := initializeParamsError(req.Params); why != "" {
		return &refusal{id: req.ID.Raw(), code: jsonrpc.CodeInvalidParams, message: why}
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

// screenBody returns the refusal of an HTTP body, one message or a batch of them, or nil. data
// is valid JSON. A batch is refused whole (with no id) when one of its messages is.
func screenBody(data []byte) *refusal {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '[' {
		return screenMessage(data)
	}
	var batch []json.RawMessage
	if json.Unmarshal(data, &batch) != nil {
		return nil
	}
	for _, raw := range batch {
		if r := screenMessage(raw); r != nil {
			r.id = nil
			return r
		}
	}
	return nil
}

// echoID is the id to answer a message refused by nodmix with: its id as the client wrote it,
// when it is a string or a number that the client gets back unchanged, else nil (JSON null).
func echoID(raw json.RawMessage) any {
	if mcpwire.CheckID(raw) != nil {
		return nil
	}
	return raw
}
