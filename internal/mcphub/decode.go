package mcphub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	if nestedDeeper(data, maxJSONDepth) {
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

// nestedDeeper reports whether data opens more than limit arrays or objects at once, counting
// brackets outside strings. A value with fewer brackets in all is not scanned.
func nestedDeeper(data []byte, limit int) bool {
	if bytes.Count(data, []byte{'['})+bytes.Count(data, []byte{'{'}) <= limit {
		return false
	}
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > limit {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// decodeMessage is jsonrpc.DecodeMessage with the standard library's decoder (FuzzDecodeMessage
// checks that they agree). Keys match exactly, as in the SDK. The message does not share memory
// with data.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	var version string
	if raw, ok := fields["jsonrpc"]; ok {
		if err := json.Unmarshal(raw, &version); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
	}
	if version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", version, "2.0")
	}
	var rawID any
	if raw, ok := fields["id"]; ok {
		if err := json.Unmarshal(raw, &rawID); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
	}
	id, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return nil, err
	}
	if raw, ok := fields["method"]; ok {
		var method string
		if err := json.Unmarshal(raw, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: rawField(fields["params"])}, nil
	}
	if !id.IsValid() {
		return nil, errNeither
	}
	resp := &jsonrpc.Response{ID: id, Result: rawField(fields["result"])}
	if raw, ok := fields["error"]; ok && !bytes.Equal(raw, []byte("null")) {
		werr, err := decodeWireError(raw)
		if err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		resp.Error = werr
	}
	return resp, nil
}

// decodeWireError decodes an error object with exactly matching keys.
func decodeWireError(raw json.RawMessage) (*jsonrpc.Error, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	var werr jsonrpc.Error
	if c, ok := fields["code"]; ok {
		if err := json.Unmarshal(c, &werr.Code); err != nil {
			return nil, err
		}
	}
	if m, ok := fields["message"]; ok {
		if err := json.Unmarshal(m, &werr.Message); err != nil {
			return nil, err
		}
	}
	werr.Data = rawField(fields["data"])
	return &werr, nil
}

// rawField keeps an absent field absent (nil) and a present one as it was, null included, as
// the SDK's decoder does.
func rawField(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	return raw
}
