package mcpserve

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/jsondepth"
	"github.com/nodmix/nodmix/internal/mcpwire"
)

// ServeStdio serves one MCP session over newline-delimited JSON on in and out (`nodmix mcp serve`
// passes os.Stdin and os.Stdout). Unlike the SDK's stdio transport, a malformed, oversized or
// batched message is answered with a JSON-RPC error and the session goes on.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	var stop io.Closer // ends a write in progress, at shutdown
	if f := pollableOutput(out); f != nil {
		defer f.Close()
		out, stop = f, f
	} else if f := UnbrokenOutput(out); f != nil {
		defer f.Close()
		out = f
	}
	t := NewLineTransport(in, out, s.opts.MaxMessageBytes).(*lineTransport)
	t.stopWrites = stop
	if f := pollableInput(in); f != nil {
		// Read through the second open; closing the connection closes both, as it closed in.
		defer f.Close()
		t.in, t.also = f, in
	}
	return s.Serve(ctx, t)
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
	in      io.Reader
	also    io.Reader // closed with in, if an io.Closer (the input in reopens)
	out     io.Writer
	max     int
	bufSize int           // of the reader; 0: 64 KiB (tests make it small, to read lines in pieces)
	drain   time.Duration // 0: inputDrain (tests make it short)
	pending int           // 0: maxPending (tests make it small)
	// stopWrites, if set, ends a write in progress: at shutdown, the SDK waits for the answers
	// of the calls in progress to be written before it closes the connection.
	stopWrites io.Closer
}

// abort ends a write in progress, which a client that does not read would hold.
func (t *lineTransport) abort() {
	if t.stopWrites != nil {
		_ = t.stopWrites.Close()
	}
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{
		in:     t.in,
		also:   t.also,
		out:    t.out,
		max:    t.max,
		br:     bufio.NewReaderSize(t.in, cmp.Or(t.bufSize, 64<<10)),
		closed: make(chan struct{}),
		drain:  cmp.Or(t.drain, inputDrain),
		room:   cmp.Or(t.pending, maxPending),
		calls:  map[jsonrpc.ID]struct{}{},
		answer: make(chan struct{}, 1),
	}
	// An input whose reads Close ends (a pipe or socket the runtime's poller watches) is read
	// by Read itself, on the SDK's reading goroutine: a goroutine of the connection's own would
	// hand every message over once more, a wake-up of the scheduler per message. Any other
	// input (a terminal, an inherited blocking pipe) is read on a goroutine of its own, so that
	// Read ends at Close even though that read cannot be interrupted.
	if f, ok := t.in.(*os.File); !ok || f.SetReadDeadline(time.Time{}) != nil {
		c.startReading()
	}
	return c, nil
}

type lineConn struct {
	in   io.Reader
	also io.Reader
	out  io.Writer
	max  int

	wmu sync.Mutex      // one message per write, whole
	enc mcpwire.Encoder // under wmu

	// Reads are serialized (the SDK reads on one goroutine), so these need no lock; once the
	// read goroutine runs, they are its own.
	br       *bufio.Reader
	line     []byte // the line being put together from chunks
	tooLong  bool   // the line is over max and is being skipped
	endErr   error  // what ended the input (io.EOF at its end), once it has ended
	incoming chan jsonrpc.Message
	readErr  error // the read goroutine's endErr, set before readDone closes
	readDone chan struct{}

	closing   atomic.Bool // Close has begun: a failed read is the end of the input
	closed    chan struct{}
	closeOnce sync.Once

	// The calls read and not yet answered. When the input ends, Read waits for their answers
	// (at most drain) before it reports the end, which makes the SDK end the session: a client
	// that writes its requests and closes its end, as a script piping a file does, gets every
	// answer instead of none.
	drain  time.Duration
	room   int // calls unanswered at most before Read waits (maxPending)
	cmu    sync.Mutex
	calls  map[jsonrpc.ID]struct{}
	answer chan struct{} // a token when calls shrinks
}

// maxPending is how many calls read may wait for their answers before the next read waits for
// one: the SDK queues the requests it reads without bound, and a client that writes calls
// without reading the answers (whose writes then block) would make that queue grow as long as
// it writes. High enough that no client doing its work waits, also one whose calls wait for its
// own answers to the server's requests (elicitation), read behind them.
const maxPending = 4096

// inputDrain bounds how long the end of the input waits for the answers of calls in progress. A
// client that closes the server's input to shut it down waits "a reasonable time" for it to exit
// (the MCP specification's stdio shutdown) before it signals it.
const inputDrain = 10 * time.Second

var _ mcp.Connection = (*lineConn)(nil)

func (c *lineConn) SessionID() string { return "" }

// startReading hands reading to a goroutine of its own.
func (c *lineConn) startReading() {
	c.incoming = make(chan jsonrpc.Message)
	c.readDone = make(chan struct{})
	go c.readLoop()
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := c.waitRoom(ctx); err != nil {
		return nil, err
	}
	msg, err := c.read(ctx)
	switch {
	case err == nil:
		if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
			c.cmu.Lock()
			c.calls[req.ID] = struct{}{}
			c.cmu.Unlock()
		}
	case errors.Is(err, io.EOF):
		c.awaitAnswers(ctx)
	}
	return msg, err
}

func (c *lineConn) read(ctx context.Context) (jsonrpc.Message, error) {
	if c.incoming == nil {
		if ctx.Done() == nil {
			return c.readDirect()
		}
		// A Read that ctx may end cannot wait in the input's read: from now on a goroutine
		// reads (the SDK's reads are never cancelled, so this does not happen in practice).
		c.startReading()
	}
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

// waitRoom waits while c.room calls are unanswered, until one is answered, the connection
// closes (the read then reports the end) or ctx ends.
func (c *lineConn) waitRoom(ctx context.Context) error {
	for {
		c.cmu.Lock()
		n := len(c.calls)
		c.cmu.Unlock()
		if n < c.room {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		select {
		case <-c.answer:
		case <-c.closed:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// awaitAnswers waits until every call read has been answered, the connection closes, ctx ends or
// the drain time is up, whichever comes first.
func (c *lineConn) awaitAnswers(ctx context.Context) {
	var timeout <-chan time.Time
	for {
		c.cmu.Lock()
		n := len(c.calls)
		c.cmu.Unlock()
		if n == 0 {
			return
		}
		if timeout == nil {
			t := time.NewTimer(c.drain)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-c.answer:
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		case <-timeout:
			return
		}
	}
}

// readDirect reads the next message on the caller's goroutine. Once the connection is closing,
// every failure is the end of the input, as a Read waiting for the read goroutine sees it.
func (c *lineConn) readDirect() (jsonrpc.Message, error) {
	if c.closing.Load() {
		return nil, io.EOF
	}
	msg, err := c.next()
	if err != nil && c.closing.Load() {
		return nil, io.EOF
	}
	return msg, err
}

func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp && resp.Error != nil {
		coded := *resp
		coded.Error = withCode(resp.Error)
		msg = &coded
	}
	err := c.writeMessage(msg)
	if isResp {
		c.answered(resp.ID)
	}
	return err
}

// writeMessage encodes msg and writes it and a newline in one write.
func (c *lineConn) writeMessage(msg jsonrpc.Message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	data, err := c.enc.Encode(msg)
	if err != nil {
		return fmt.Errorf("encoding message: %w", err)
	}
	return c.writeLocked(data)
}

// answered takes the call id off the calls waiting for an answer.
func (c *lineConn) answered(id jsonrpc.ID) {
	c.cmu.Lock()
	_, ok := c.calls[id]
	delete(c.calls, id)
	c.cmu.Unlock()
	if ok {
		select {
		case c.answer <- struct{}{}:
		default:
		}
	}
}

// writeLine writes data and a newline in one write. data is the caller's to give: the newline
// is appended to it (an encoder's output usually has room for it).
func (c *lineConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(append(data, '\n'))
}

// writeLocked writes data, a whole line, with wmu held.
func (c *lineConn) writeLocked(data []byte) error {
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	_, err := c.out.Write(data)
	return err
}

// Close stops the connection. It does not wait for a read goroutine: a read from a terminal or
// an inherited blocking pipe cannot be interrupted (closing os.Stdin does not end a read in
// progress), and shutdown must not wait for a client that keeps its end open. Such a goroutine
// ends when the input does: at once for an input whose Close ends reads (io.Pipe, a socket),
// else at its next line or EOF, or with the process.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		close(c.closed)
		for _, in := range []io.Reader{c.in, c.also} {
			if cl, ok := in.(io.Closer); ok {
				_ = cl.Close()
			}
		}
	})
	return nil
}

func (c *lineConn) readLoop() {
	defer close(c.readDone)
	for {
		msg, err := c.next()
		if err != nil {
			c.readErr = err
			return
		}
		select {
		case c.incoming <- msg:
		case <-c.closed:
			c.readErr = io.EOF
			return
		}
	}
}

// next reads lines until one is a message, answering each of the others with an error, and
// returns it. It returns the error that ended the input (io.EOF at its end) once no line is
// left, and then again on every call.
func (c *lineConn) next() (jsonrpc.Message, error) {
	for c.endErr == nil {
		chunk, err := c.br.ReadSlice('\n')
		data := chunk // a whole line as read, valid until the next read, when it needs no copy
		if !c.tooLong && (len(c.line) > 0 || err != nil) {
			if len(c.line)+len(chunk) > c.max+1 { // +1: the newline
				c.tooLong, c.line = true, c.line[:0]
			} else {
				c.line = append(c.line, chunk...)
				data = c.line
			}
		} else if !c.tooLong && len(chunk) > c.max+1 {
			c.tooLong = true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			c.endErr = err
			break
		}
		if err != nil {
			c.endErr = io.EOF
		}
		tooLong := c.tooLong
		c.tooLong, c.line = false, c.line[:0]
		switch {
		case tooLong:
			c.reject(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message too large: over %d bytes", c.max))
		case len(bytes.TrimSpace(data)) > 0:
			msg, id, code, why := decodeLine(data)
			if msg != nil {
				return msg, nil
			}
			c.reject(id, code, why)
		}
	}
	return nil, c.endErr
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
	if jsondepth.Deeper(data, maxJSONDepth) {
		return nil, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: JSON nested deeper than %d levels", maxJSONDepth)
	}
	if !json.Valid(data) {
		return nil, nil, jsonrpc.CodeParseError, "parse error: not valid JSON"
	}
	if data[0] == '[' {
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported"
	}
	m, err := decodeMessage(data)
	if errors.Is(err, mcpwire.ErrInexactID) {
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error() // no id: it cannot be given back as sent
	}
	if err != nil {
		// Only a refusal needs the id read on its own; a good message carries it already. The
		// id of a message without a method is one of nodmix's own requests (a malformed
		// response): an error with it would read as the answer to the client's call of that id.
		if r := shapeRefusal(data); r != nil {
			return nil, r.id, r.code, r.message
		}
		var keys map[string]json.RawMessage
		if json.Unmarshal(data, &keys) == nil && keys["method"] != nil {
			id = echoID(keys["id"])
		}
		return nil, id, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	if r := screenRequest(m); r != nil {
		return nil, r.id, r.code, r.message
	}
	return m, nil, 0, ""
}

// decodeMessage is jsonrpc.DecodeMessage with the standard library (see package mcpwire): the
// SDK's decoder allocates tens of kilobytes per message, which is most of what a call through
// nodmix costs. It also refuses a request whose id the SDK would change (mcpwire.ErrInexactID).
// The message does not share memory with data.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	m, err := mcpwire.DecodeExact(data)
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
