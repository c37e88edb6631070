package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/mcpwire"
)

// ServeStdio serves one MCP session over newline-delimited JSON on in and out (`nodmix mcp serve`
// passes os.Stdin and os.Stdout). Unlike the SDK's stdio transport, a malformed, oversized or
// batched message is answered with a JSON-RPC error and the session goes on.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return s.Serve(ctx, NewLineTransport(in, out, s.opts.MaxMessageBytes))
}

// NewLineTransport is an MCP transport over newline-delimited JSON that survives bad input: each
// line that is not a JSON-RPC message gets an error response (parse error -32700, invalid request
// -32600) instead of ending the connection. Lines longer than maxBytes are refused the same way.
// If in is an io.Closer, closing the connection closes it, to end the read.
func NewLineTransport(in io.Reader, out io.Writer, maxBytes int) mcp.Transport {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMessageBytes
	}
	return &lineTransport{in: in, out: out, max: maxBytes}
}

type lineTransport struct {
	in  io.Reader
	out io.Writer
	max int
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{
		in:       t.in,
		out:      t.out,
		max:      t.max,
		incoming: make(chan jsonrpc.Message),
		closed:   make(chan struct{}),
		readDone: make(chan struct{}),
	}
	go c.readLoop()
	return c, nil
}

type lineConn struct {
	in  io.Reader
	out io.Writer
	max int

	wmu sync.Mutex // one message per write, whole

	incoming  chan jsonrpc.Message
	readErr   error // set before readDone closes
	closed    chan struct{}
	readDone  chan struct{}
	closeOnce sync.Once
}

var _ mcp.Connection = (*lineConn)(nil)

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		return msg, nil
	case <-c.readDone:
		return nil, c.readErr
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		coded := *resp
		coded.Error = withCode(resp.Error)
		msg = &coded
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding message: %w", err)
	}
	return c.writeLine(data)
}

// writeLine writes data and a newline in one write. data is the caller's to give: the newline
// is appended to it (an encoder's output usually has room for it).
func (c *lineConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// Close stops the connection without waiting for the read goroutine: a read from a terminal or
// an inherited pipe cannot be interrupted (closing os.Stdin does not end a read in progress),
// and shutdown must not wait for a client that keeps its end open. The goroutine ends when the
// input does: at once for an input whose Close ends reads (io.Pipe, a socket), else at its next
// line or EOF, or with the process.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		if cl, ok := c.in.(io.Closer); ok {
			_ = cl.Close()
		}
	})
	return nil
}

func (c *lineConn) readLoop() {
	defer close(c.readDone)
	br := bufio.NewReaderSize(c.in, 64<<10)
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > c.max+1 { // +1: the newline
				tooLong, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			c.readErr = err
			return
		}
		atEOF := err != nil
		switch {
		case tooLong:
			c.reject(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message too large: over %d bytes", c.max))
		case len(bytes.TrimSpace(line)) > 0:
			msg, id, code, why := decodeLine(line)
			if msg == nil {
				c.reject(id, code, why)
				break
			}
			select {
			case c.incoming <- msg:
			case <-c.closed:
				c.readErr = io.EOF
				return
			}
		}
		tooLong, line = false, line[:0]
		if atEOF {
			c.readErr = io.EOF
			return
		}
	}
}

// errBeforeInitialize is how the SDK refuses a call that comes before initialize; it sends it
// without an error code (0), which JSON-RPC does not allow.
const errBeforeInitialize = "is invalid during session initialization"

// withCode returns err as a JSON-RPC error that has a code. The SDK sends a handler's plain
// error with code 0: a call before initialize becomes invalid request (-32600, what the
// specification's "not initialized" is in JSON-RPC terms), anything else internal error.
func withCode(err error) error {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && wire.Code != 0 {
		return err
	}
	coded := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	if wire != nil {
		coded.Data = wire.Data
	}
	if strings.HasSuffix(coded.Message, errBeforeInitialize) {
		coded.Code = jsonrpc.CodeInvalidRequest
	}
	return coded
}

// maxJSONDepth is the nesting the SDK's decoder accepts (it refuses deeper params over HTTP, and
// over stdio would echo all of them back in its error): deeper lines are refused as too deep.
const maxJSONDepth = 1000

// decodeLine decodes one line. When it is not a message, it returns the id to answer with (when
// one could be read), the JSON-RPC error code and the reason.
func decodeLine(line []byte) (msg jsonrpc.Message, id any, code int64, why string) {
	data := bytes.TrimSpace(line)
	if mcpwire.NestedDeeper(data, maxJSONDepth) {
		return nil, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: JSON nested deeper than %d levels", maxJSONDepth)
	}
	if !json.Valid(data) {
		return nil, nil, jsonrpc.CodeParseError, "parse error: not valid JSON"
	}
	if data[0] == '[' {
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported"
	}
	m, err := decodeMessage(data)
	if err != nil {
		// Only a refusal needs the id read on its own; a good message carries it already.
		var head struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(data, &head) == nil {
			switch head.ID.(type) {
			case string, float64:
				id = head.ID
			}
		}
		return nil, id, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	return m, nil, 0, ""
}

// decodeMessage is jsonrpc.DecodeMessage with the standard library (see package wire): the
// SDK's decoder allocates tens of kilobytes per message, which is most of what a call through
// nodmix costs. The message does not share memory with data.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	m, err := mcpwire.Decode(data)
	if errors.Is(err, mcpwire.ErrNeither) {
		return nil, errors.New("invalid request: neither a request nor a response")
	}
	return m, err
}

// reject answers a line that is not a message. A failure to write ends nothing here: the next
// SDK write fails the same way and closes the connection.
func (c *lineConn) reject(id any, code int64, message string) {
	data, err := json.Marshal(newErrorResponse(id, code, message))
	if err == nil {
		_ = c.writeLine(data)
	}
}

// errorResponse is a JSON-RPC error response written by nodmix itself, for a message the SDK never
// sees (a bad stdio line, an HTTP session that could not be opened).
type errorResponse struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      any            `json:"id"`
	Error   *jsonrpc.Error `json:"error"`
}

func newErrorResponse(id any, code int64, message string) errorResponse {
	return errorResponse{"2.0", id, &jsonrpc.Error{Code: code, Message: message}}
}
