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

// decodeBatch decodes one JSON value read from the stream, which is valid JSON: a message, or a
// batch of them (a JSON array, or null, which the SDK takes for an empty batch).
func decodeBatch(data []byte) (msgs []jsonrpc.Message, batch bool, _ error) {
	if jsondepth.Deeper(data, maxJSONDepth) {
		return nil, false, errTooDeep
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || (data[0] != '[' && !bytes.Equal(data, []byte("null"))) {
		msg, err := decodeMessage(data)
		if err != nil {
			return nil, false, err
		}
		return []jsonrpc.Message{msg}, false, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, true, fmt.Errorf("unmarshaling jsonrpc batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, true, errors.New("empty batch")
	}
	for _, raw := range raws {
		msg, err := decodeMessage(raw)
		if err != nil {
			return nil, true, err
		}
		msgs = append(msgs, msg)
	}
	return msgs, true, nil
}

// decodeMessage is jsonrpc.DecodeMessage with the standard library (see package wire); errors
// read as the SDK's.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	m, err := mcpwire.Decode(data)
	if errors.Is(err, mcpwire.ErrNeither) {
		return nil, errNeither
	}
	return m, err
}
