// Package mcpwire decodes JSON-RPC messages for nodmix's MCP transports: the stdio face of its MCP
// server (mcpserve) and its connections to stdio servers (mcphub). It decodes as the SDK's
// jsonrpc.DecodeMessage does, keys matched exactly, but with the standard library: the SDK's
// decoder allocates a 32 KiB buffer for every value it decodes, and it decodes three of them for
// one request.
package mcpwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ErrNeither is returned for a message that has neither a method nor an id. The SDK returns
// its invalid request error (code -32600, "invalid request"); each transport says it its way.
var ErrNeither = errors.New("neither a request nor a response")

// Decode decodes one message from data, which must be valid JSON. The message does not share
// memory with data. Errors read as the SDK's, except that the standard library words the
// reasons a value does not decode.
func Decode(data []byte) (jsonrpc.Message, error) {
	msg, _, err := decode(data)
	return msg, err
}

// DecodeExact is Decode for a server's input: it also refuses a request whose id the SDK's
// jsonrpc.ID would not give back as the client sent it (see ErrInexactID). A changed id is the
// one answer a client cannot use: it never matches the reply to its request.
func DecodeExact(data []byte) (jsonrpc.Message, error) {
	msg, rawID, err := decode(data)
	if err != nil {
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		if err := exactID(rawID); err != nil {
			return nil, err
		}
	}
	return msg, nil
}

// decode decodes data and returns the id as it was written, too.
func decode(data []byte) (jsonrpc.Message, []byte, error) {
	if msg, id, ok := decodeFast(data); ok {
		return msg, id, nil
	}
	return decodeSlow(data)
}

// decodeSlow decodes data with the standard library's decoder, through a map so that keys match
// exactly.
func decodeSlow(data []byte) (jsonrpc.Message, []byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	var version string
	if raw, ok := fields["jsonrpc"]; ok {
		if err := json.Unmarshal(raw, &version); err != nil {
			return nil, nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
	}
	if version != "2.0" {
		return nil, nil, fmt.Errorf("invalid message version tag %q; expected %q", version, "2.0")
	}
	var rawID any
	if raw, ok := fields["id"]; ok {
		if err := json.Unmarshal(raw, &rawID); err != nil {
			return nil, nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
	}
	id, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return nil, nil, err
	}
	if raw, ok := fields["method"]; ok {
		var method string
		if err := json.Unmarshal(raw, &method); err != nil {
			return nil, nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: rawField(fields["params"])}, fields["id"], nil
	}
	if !id.IsValid() {
		return nil, nil, ErrNeither
	}
	resp := &jsonrpc.Response{ID: id, Result: rawField(fields["result"])}
	if raw, ok := fields["error"]; ok && !bytes.Equal(raw, []byte("null")) {
		werr, err := decodeWireError(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		resp.Error = werr
	}
	return resp, fields["id"], nil
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

// Head is what ReadHead reads of a message: its fields as written, sharing memory with the
// message.
type Head struct {
	ID     []byte // nil when absent; the JSON null when null
	Method []byte // the method's text; nil for a response
	Params []byte // nil when absent
	Result []byte // nil when absent

	hasMethod bool
}

// IsRequest reports whether the message is a request (a call or a notification).
func (h Head) IsRequest() bool { return h.hasMethod }

// IsCall reports whether the message is a request with an id.
func (h Head) IsCall() bool { return h.hasMethod && h.ID != nil && string(h.ID) != "null" }

// ReadHead reads the fields of a message as Decode reads them, without decoding them or
// allocating: for a transport that screens a message another decoder (the SDK's) is to decode.
// It reads the messages calls are made of, as Decode's fast path does; for any other message
// (escaped keys, an escaped method, an error object, anything Decode refuses) it reports false,
// and the message is to be decoded to know what it is. data is valid JSON. A request whose id
// ReadHead returns is one Decode decodes; CheckID says whether DecodeExact takes it.
func ReadHead(data []byte) (Head, bool) {
	var h Head
	var version, errObj []byte
	s := scanner{data: data}
	s.space()
	if !s.take('{') {
		return Head{}, false
	}
	s.space()
	if !s.take('}') {
		for {
			key, ok := s.plainString()
			if !ok {
				return Head{}, false
			}
			s.space()
			if !s.take(':') {
				return Head{}, false
			}
			s.space()
			val, ok := s.value()
			if !ok {
				return Head{}, false
			}
			// A repeated key counts as its last value, as in decodeSlow's map.
			switch string(key) {
			case "jsonrpc":
				version = val
			case "id":
				h.ID = val
			case "method":
				h.Method, h.hasMethod = val, true
			case "params":
				h.Params = val
			case "result":
				h.Result = val
			case "error":
				errObj = val
			}
			s.space()
			if s.take('}') {
				break
			}
			if !s.take(',') {
				return Head{}, false
			}
			s.space()
		}
	}
	if v, ok := plainText(version); !ok || string(v) != "2.0" {
		return Head{}, false
	}
	switch id := h.ID; {
	case id == nil || string(id) == "null":
	case id[0] == '"':
		if _, ok := plainText(id); !ok {
			return Head{}, false
		}
	case id[0] == '-' || ('0' <= id[0] && id[0] <= '9'):
		if _, err := strconv.ParseFloat(string(id), 64); err != nil {
			return Head{}, false
		}
	default:
		return Head{}, false
	}
	if h.hasMethod {
		name, ok := plainText(h.Method)
		if !ok {
			return Head{}, false
		}
		h.Method = name
		return h, true
	}
	if h.ID == nil || string(h.ID) == "null" || (errObj != nil && string(errObj) != "null") {
		return Head{}, false
	}
	return h, true
}

// decodeFast decodes the messages calls are made of — an object whose keys have no escapes,
// with a plain string version and method, a string or number id and no error object — without
// the reflection and the maps of decodeSlow. It reports false for anything else, which
// decodeSlow then decodes (FuzzDecode checks that both agree). data is valid JSON.
func decodeFast(data []byte) (jsonrpc.Message, []byte, bool) {
	h, ok := ReadHead(data)
	if !ok {
		return nil, nil, false
	}
	var mid jsonrpc.ID
	switch id := h.ID; {
	case id == nil || string(id) == "null":
	case id[0] == '"':
		mid, _ = jsonrpc.MakeID(string(id[1 : len(id)-1]))
	default:
		f, _ := strconv.ParseFloat(string(id), 64)
		mid, _ = jsonrpc.MakeID(f)
	}
	if h.hasMethod {
		return &jsonrpc.Request{ID: mid, Method: methodName(h.Method), Params: clone(h.Params)}, h.ID, true
	}
	return &jsonrpc.Response{ID: mid, Result: clone(h.Result)}, h.ID, true
}

// methodName returns the method as a string, without allocating for the frequent ones.
func methodName(b []byte) string {
	switch string(b) {
	case "tools/call":
		return "tools/call"
	case "tools/list":
		return "tools/list"
	case "ping":
		return "ping"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "notifications/progress":
		return "notifications/progress"
	}
	return string(b)
}

// clone copies a raw value, keeping an absent one nil.
func clone(raw []byte) json.RawMessage {
	if raw == nil {
		return nil
	}
	return bytes.Clone(raw)
}

// plainText returns the text of a JSON string without escapes whose bytes are valid UTF-8 (the
// standard library would replace invalid bytes), and false for anything else.
func plainText(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	text := raw[1 : len(raw)-1]
	if bytes.IndexByte(text, '\\') >= 0 || !utf8.Valid(text) {
		return nil, false
	}
	return text, true
}

// scanner walks valid JSON.
type scanner struct {
	data []byte
	pos  int
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) take(c byte) bool {
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// plainString reads a string without escapes and returns its text.
func (s *scanner) plainString() ([]byte, bool) {
	if !s.take('"') {
		return nil, false
	}
	start := s.pos
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '\\':
			return nil, false
		case '"':
			s.pos++
			return s.data[start : s.pos-1], true
		}
		s.pos++
	}
	return nil, false
}

// value skips one value and returns its bytes.
func (s *scanner) value() ([]byte, bool) {
	start := s.pos
	if s.pos >= len(s.data) {
		return nil, false
	}
	switch s.data[s.pos] {
	case '"':
		if !s.skipString() {
			return nil, false
		}
	case '{', '[':
		depth := 0
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case '"':
				if !s.skipString() {
					return nil, false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.pos++
			if depth == 0 {
				break
			}
		}
		if depth != 0 {
			return nil, false
		}
	default:
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return s.data[start:s.pos], s.pos > start
			}
			s.pos++
		}
	}
	return s.data[start:s.pos], true
}

// skipString skips a string, escapes included.
func (s *scanner) skipString() bool {
	s.pos++ // the opening quote
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '\\':
			s.pos += 2
			continue
		case '"':
			s.pos++
			return true
		}
		s.pos++
	}
	return false
}
