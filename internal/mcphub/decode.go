package mcphub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/nodmix/nodmix/internal/jsondepth"
	"github.com/nodmix/nodmix/internal/mcpwire"
)

// maxJSONDepth is the nesting the SDK's decoder accepts; a deeper message ends the connection,
// as it does with the SDK's own.
const maxJSONDepth = 1000

// errTooDeep is the SDK's error for a message nested deeper than maxJSONDepth.
var errTooDeep = fmt.Errorf("unmarshaling jsonrpc message: json: exceeded maximum nesting depth of %d", maxJSONDepth)

// errNeither is the SDK's error (jsonrpc2.ErrInvalidRequest) for a message without a method or
// an id; errors.Is matches it by code as it matches the SDK's.
var errNeither = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}

// decodeBatch decodes one JSON value read from the stream, which is valid JSON: a message (msg),
// or a batch of them (a JSON array, or null, which the SDK takes for an empty batch). A message
// alone is not put in a slice of its own: that would cost every message an allocation. A request
// whose id the SDK would not give back as the server wrote it (1.5, 1e3, beyond 2^53: see
// mcpwire.ErrInexactID) is not for the SDK: refusal is the answer to write for it, with the id
// as written. In a batch, such a request fails the batch, and the session with it.
func decodeBatch(data []byte) (msg jsonrpc.Message, batch []jsonrpc.Message, refusal []byte, _ error) {
	if jsondepth.Deeper(data, maxJSONDepth) {
		return nil, nil, nil, errTooDeep
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || (data[0] != '[' && !bytes.Equal(data, []byte("null"))) {
		msg, err := decodeMessage(data)
		if errors.Is(err, mcpwire.ErrInexactID) {
			return nil, nil, refuseInexact(data, err), nil
		}
		if err != nil {
			return nil, nil, nil, err
		}
		return msg, nil, nil, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, nil, nil, fmt.Errorf("unmarshaling jsonrpc batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, nil, nil, errors.New("empty batch")
	}
	for _, raw := range raws {
		msg, err := decodeMessage(raw)
		if err != nil {
			return nil, nil, nil, err
		}
		batch = append(batch, msg)
	}
	return nil, batch, nil, nil
}

// refuseInexact is the answer to a request whose id is inexact: invalid request (-32600), with
// the id byte for byte as the server wrote it, so that it can match the answer to its request.
func refuseInexact(data []byte, why error) []byte {
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(data, &keys)
	id := keys["id"]
	if !json.Valid(id) {
		id = json.RawMessage("null")
	}
	line, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + why.Error()}})
	return append(line, '\n')
}

// decodeMessage is jsonrpc.DecodeMessage with the standard library (see package mcpwire);
// errors read as the SDK's. It refuses a request whose id the SDK would change
// (mcpwire.ErrInexactID), which the SDK would answer with another id.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	m, err := mcpwire.DecodeExact(data)
	if errors.Is(err, mcpwire.ErrNeither) {
		return nil, errNeither
	}
	return m, err
}
