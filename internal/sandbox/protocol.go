package sandbox

// The parent and the child talk over the child's stdin/stdout, one JSON object per line (JSON
// escapes newlines inside strings, so a line is always one message). The exchange, modelled on
// the reference's IPC:
//
//	child  → parent  {"type":"hello","version":1}              runtime built, ready for a run
//	parent → child   {"type":"run","code":…,"limits":{…}}      exactly once
//	child  → parent  {"type":"log","line":…[,"truncated":true]}
//	child  → parent  {"type":"bridge","id":"1","method":"search","args":{"query":…,"limit":…}}
//	parent → child   {"type":"bridge-result","id":"1","ok":true,"value":…} | {…,"error":…}
//	child  → parent  {"type":"wait","seen":N}                  idle until a bridge result arrives,
//	                                                            having consumed N results so far
//	child  → parent  {"type":"result","ok":true,"value":…} | {"ok":false,"kind":…,"error":…}
//
// "wait" lets the parent stop the run's clock only while the child is provably idle on the host:
// when N equals the number of results the parent has sent, nothing is queued for the child.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

const protocolVersion = 1

// helloLine is the child's first message, {"type":"hello","version":protocolVersion}, as
// encodeMessage writes it (TestHelloLine keeps the two equal).
const helloLine = `{"type":"hello","version":1}` + "\n"

const (
	msgHello        = "hello"
	msgRun          = "run"
	msgLog          = "log"
	msgBridge       = "bridge"
	msgBridgeResult = "bridge-result"
	msgWait         = "wait"
	msgResult       = "result"
)

// Bridge methods as they appear on the wire.
const (
	methodSearch   = "search"
	methodDescribe = "describe"
	methodCall     = "call"
)

// Failure kinds on the wire (child → parent); mapped onto FailureKind by the parent.
const (
	wireThrown       = "thrown"
	wireLimit        = "limit"
	wireNeverSettled = "never-settled"
	wireAborted      = "aborted"
	wireInternal     = "internal"
)

// message is every protocol message; which fields are meaningful depends on Type.
type message struct {
	Type      string          `json:"type"`
	Version   int             `json:"version,omitempty"`
	Code      string          `json:"code,omitempty"`
	Limits    *wireLimits     `json:"limits,omitempty"`
	ID        string          `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	OK        bool            `json:"ok,omitempty"`
	Value     json.RawMessage `json:"value,omitempty"`
	Error     string          `json:"error,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	Line      string          `json:"line,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`
	Seen      int             `json:"seen,omitempty"`
}

// wireLimits are the limits the child enforces itself; the timeout stays with the parent.
type wireLimits struct {
	MemoryBytes    int64 `json:"memoryBytes"`
	MaxLogBytes    int   `json:"maxLogBytes"`
	MaxResultBytes int   `json:"maxResultBytes"`
	MaxBridgeCalls int   `json:"maxBridgeCalls"`
}

var errMessageTooLarge = errors.New("protocol message too large")

// decodeMessage parses and validates one line. It never trusts a field the type does not use.
func decodeMessage(line []byte) (message, error) {
	var m message
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return message{}, fmt.Errorf("decode protocol message: %w", err)
	}
	if dec.More() {
		return message{}, errors.New("decode protocol message: trailing data")
	}
	switch m.Type {
	case msgHello:
		if m.Version != protocolVersion {
			return message{}, fmt.Errorf("hello.version: got %d, want %d", m.Version, protocolVersion)
		}
	case msgRun:
		if m.Limits == nil {
			return message{}, errors.New("run.limits: required")
		}
		l := m.Limits
		if l.MemoryBytes <= 0 || l.MaxLogBytes <= 0 || l.MaxResultBytes <= 0 || l.MaxBridgeCalls <= 0 {
			return message{}, errors.New("run.limits: every limit must be positive")
		}
	case msgLog:
	case msgBridge:
		if m.ID == "" {
			return message{}, errors.New("bridge.id: required")
		}
		if len(m.Args) == 0 || !json.Valid(m.Args) {
			return message{}, errors.New("bridge.args: must be JSON")
		}
	case msgBridgeResult:
		if m.ID == "" {
			return message{}, errors.New("bridge-result.id: required")
		}
		if m.OK && (len(m.Value) == 0 || !json.Valid(m.Value)) {
			return message{}, errors.New("bridge-result.value: must be JSON when ok")
		}
	case msgWait:
		if m.Seen < 0 {
			return message{}, errors.New("wait.seen: must not be negative")
		}
	case msgResult:
		if m.OK && (len(m.Value) == 0 || !json.Valid(m.Value)) {
			return message{}, errors.New("result.value: must be JSON when ok")
		}
		if !m.OK && m.Error == "" {
			return message{}, errors.New("result.error: required when not ok")
		}
	default:
		return message{}, fmt.Errorf("type: unknown message type %q", m.Type)
	}
	return m, nil
}

// encodeMessage writes m as one line.
func encodeMessage(m message) ([]byte, error) {
	b, err := marshalLine(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s message: %w", m.Type, err)
	}
	return b, nil
}

// marshalLine is json.Marshal followed by a newline, but <, > and & stay as they are, as
// JSON.stringify writes them: escaped, they would reach the model as \u003c in a value the
// code returned, and a tool as \u0026 in the arguments the code passed.
func marshalLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readLine returns the next line without its newline, refusing lines over max bytes so that a
// misbehaving peer cannot make the reader buffer without bound. A final unterminated line is
// dropped: it is what a killed writer leaves behind.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	return readLineLimit(r, func() int { return max })
}

// readLineLimit is readLine with a cap that may change while the reader waits: limit is asked
// each time data arrives, so a cap raised after the read began applies to the line it reads.
func readLineLimit(r *bufio.Reader, limit func() int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > limit()+1 {
			return nil, errMessageTooLarge
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// Arguments of the bridge methods on the wire. Pointers tell "absent" from a zero value.
type searchArgs struct {
	Query *string `json:"query"`
	Limit int     `json:"limit,omitempty"`
}

type describeArgs struct {
	ID *string `json:"id"`
}

type callArgs struct {
	ID   *string         `json:"id"`
	Args json.RawMessage `json:"args,omitempty"`
}
