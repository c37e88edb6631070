package mcpwire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxKeptBuffer is the largest buffer an Encoder keeps for the next message: one large result
// should not hold its memory for the life of the connection.
const maxKeptBuffer = 1 << 20

// Encoder encodes messages as the SDK's jsonrpc.EncodeMessage does, each followed by a newline
// (the stdio framing), into a buffer it keeps for the next message: EncodeMessage makes a buffer,
// an encoder and a copy of the message for each one. Its zero value is ready for use. It is not
// safe for concurrent use (a connection's write lock covers it), and must not be copied once
// used.
type Encoder struct {
	buf  bytes.Buffer
	enc  *json.Encoder
	wire wireMessage
}

// wireMessage is the SDK's wire form of a message (jsonrpc2.wireCombined), field for field.
type wireMessage struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     string          `json:"method,omitempty"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// Encode returns msg's encoding and a newline, valid until the next call. A response with an
// error, rare, is encoded by the SDK itself: its error may need the SDK's conversion.
func (e *Encoder) Encode(msg jsonrpc.Message) ([]byte, error) {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false) // as the SDK's encoder
	}
	if e.buf.Cap() > maxKeptBuffer {
		e.buf = bytes.Buffer{} // the encoder writes through a pointer to it: still e.buf
	}
	e.buf.Reset()
	e.wire = wireMessage{VersionTag: "2.0"}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		e.wire.ID, e.wire.Method, e.wire.Params = m.ID.Raw(), m.Method, m.Params
	case *jsonrpc.Response:
		if m.Error != nil {
			return e.bySDK(msg)
		}
		e.wire.ID, e.wire.Result = m.ID.Raw(), m.Result
	default:
		return e.bySDK(msg)
	}
	err := e.enc.Encode(&e.wire)
	e.wire = wireMessage{} // holds no message past the call
	if err != nil {
		return nil, fmt.Errorf("marshaling jsonrpc message: %w", err)
	}
	return e.buf.Bytes(), nil // Encode ends the value with the newline
}

func (e *Encoder) bySDK(msg jsonrpc.Message) ([]byte, error) {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	e.buf.Write(data)
	e.buf.WriteByte('\n')
	return e.buf.Bytes(), nil
}
