package mcphub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/mcpwire"
)

// commandTransport is mcp.CommandTransport with nodmix's own connection: the same process
// handling, framing and errors, but each message is decoded with the standard library. The SDK's
// connection decodes every incoming message twice more with a decoder that allocates a 32 KiB
// buffer per call (first as a batch, then as one message), which made up a third of what a tool
// call through the hub allocated; the SDK keeps the protocol itself.
type commandTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration // after closing stdin, before SIGTERM; 0: the SDK's 5s
	conn      atomic.Pointer[streamConn]
	leftOut   func([]string) // see streamConn.leftOut
}

// abortWrites ends the writes to the server's stdin, now and later (see streamConn.abortWrites).
func (t *commandTransport) abortWrites() {
	if c := t.conn.Load(); c != nil {
		c.abortWrites()
	}
}

// defaultTerminateDuration is the SDK's default for mcp.CommandTransport.TerminateDuration.
const defaultTerminateDuration = 5 * time.Second

// maxFrameBytes bounds one incoming message, as the SDK's mcp.DefaultMaxLineLength does.
const maxFrameBytes = mcp.DefaultMaxLineLength

// maxUnanswered bounds the server's requests (pings, roots/list …) waiting for their answers to
// be written. A server asks a client for little, and the hub answers at once; a server past the
// bound is not reading its stdin, and each of its requests would hold a goroutine.
const maxUnanswered = 1000

func (t *commandTransport) Connect(context.Context) (mcp.Connection, error) {
	// The hub's own pipe, not StdoutPipe: the process is waited for from its start (see
	// processCloser.watch), and Wait would close a StdoutPipe before its last output is read.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	t.cmd.Stdout = w
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		_, _ = stdout.Close(), w.Close()
		return nil, err
	}
	err = t.cmd.Start()
	_ = w.Close() // the server's now; the stream ends when every holder has closed it
	if err != nil {
		_ = stdout.Close()
		return nil, err
	}
	td := t.terminate
	if td <= 0 {
		td = defaultTerminateDuration
	}
	p := &processCloser{cmd: t.cmd, stdin: stdin, stdout: stdout, terminate: td, exited: make(chan struct{})}
	c := newStreamConn(stdout, stdin, p)
	c.exit = p.exitError
	c.leftOut = t.leftOut
	// After newStreamConn, which clears stdout's deadline to learn whether it takes one.
	go p.watch()
	t.conn.Store(c)
	return c, nil
}

// processCloser ends a server as the MCP specification says and the SDK does: close its stdin,
// wait for it to exit, then SIGTERM, then SIGKILL.
type processCloser struct {
	cmd       *exec.Cmd
	stdin     io.Closer
	stdout    *os.File
	terminate time.Duration
	exited    chan struct{} // closed once the process has exited
	waitErr   error         // Wait's, once exited is closed
}

// watch waits for the process. A process the server started may hold its stdout open after it
// exited (a helper run in the background, a shell wrapper's leftover): the stream would never
// end and the connection would stay up for ever, every call waiting for its timeout. Once the
// server has exited, what it wrote gets a moment to be read, then reading ends.
func (p *processCloser) watch() {
	p.waitErr = p.cmd.Wait()
	close(p.exited)
	_ = p.stdout.SetReadDeadline(time.Now().Add(stderrDrain))
}

// exitError says how the server ended once it has exited; nil while it runs.
func (p *processCloser) exitError() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	if p.waitErr != nil {
		return fmt.Errorf("the server exited: %w", p.waitErr)
	}
	return errors.New("the server exited")
}

func (p *processCloser) Close() error {
	// Once the process is ended, nothing more comes from it that the hub would read.
	defer p.stdout.Close()
	// Wait closes stdin once the process has exited: closed already, it is no error.
	if err := p.stdin.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("closing stdin: %v", err)
	}
	wait := func() (error, bool) {
		t := time.NewTimer(p.terminate)
		defer t.Stop()
		select {
		case <-p.exited:
			return p.waitErr, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	// If SIGTERM cannot be sent, SIGKILL follows at once.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return fmt.Errorf("unresponsive subprocess")
}

// streamConn is an MCP client connection over a stream of JSON values, each followed by a
// newline, as the SDK's stdio connection reads them (a value may span lines). Like the SDK's,
// it answers a batch of requests with a batch.
//
// A stream whose reads Close can interrupt (a pipe the runtime's poller watches, as a server's
// stdout is) is read by Read itself, on the SDK's reading goroutine: a goroutine of the
// connection's own would hand every message over once more, which costs a wake-up of the
// scheduler per message. Any other stream is read on a goroutine of its own, so that Read ends
// at Close even when the stream's read cannot be interrupted (the goroutine then ends with the
// process).
type streamConn struct {
	w      io.Writer
	closer io.Closer

	writeMu  sync.Mutex
	enc      mcpwire.Encoder // under writeMu
	refusals sync.WaitGroup  // the writes of answers to requests not for the SDK (see read)

	// Reads are serialized (the SDK reads on one goroutine), so these need no lock.
	frames   *frameReader
	incoming chan decoded      // the read goroutine's, once it runs; until then Read reads
	queue    []jsonrpc.Message // the rest of the last batch
	readErr  error             // what ended direct reading

	batchMu sync.Mutex
	batches map[jsonrpc.ID]*msgBatch

	// listing is the id of the hub's tools/list call waiting for its result, which
	// screenToolsPage reads before the SDK: the hub lists one page at a time. listed says one
	// waits, so that a message read while none does (nearly every one) takes no lock. leftOut,
	// if set, is told what a page left out.
	listMu  sync.Mutex
	listing jsonrpc.ID
	listed  atomic.Bool
	leftOut func([]string)

	// unanswered counts the server's calls read and not yet answered: the SDK holds a goroutine
	// for each until its answer is written, which blocks while the server does not read.
	unanswered atomic.Int64
	// writesAborted: see abortWrites.
	writesAborted atomic.Bool
	// abort is abortWrites as a func value, made once: Write registers it for every message,
	// and the method value would be allocated each time.
	abort func()

	pollable  deadliner    // the stream, when Close can end its reads; else nil
	exit      func() error // a command server's exit, once it has exited; nil for other streams
	closing   atomic.Bool  // Close has begun: a failed read is the end of the stream
	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// deadliner is a stream whose blocked reads a deadline ends: an *os.File the poller watches.
type deadliner interface {
	SetReadDeadline(t time.Time) error
}

// decoded is one message or a batch read from the stream, or why not.
type decoded struct {
	msg     jsonrpc.Message   // a message alone
	batch   []jsonrpc.Message // or the messages of a batch
	refusal []byte            // the answer to a request that is not for the SDK; no messages then
	err     error
}

// msgBatch correlates the responses to an incoming batch of requests, written all at once.
type msgBatch struct {
	unresolved map[jsonrpc.ID]int
	responses  []*jsonrpc.Response
}

var _ mcp.Connection = (*streamConn)(nil)

func newStreamConn(r io.Reader, w io.Writer, closer io.Closer) *streamConn {
	c := &streamConn{w: w, closer: closer, closed: make(chan struct{})}
	c.abort = c.abortWrites
	c.frames = &frameReader{br: bufio.NewReaderSize(r, 64<<10)}
	// An *os.File that is not pollable refuses deadlines.
	if f, ok := r.(*os.File); ok && f.SetReadDeadline(time.Time{}) == nil {
		c.pollable = f
	} else {
		c.startReading()
	}
	return c
}

// startReading hands reading to a goroutine of its own.
func (c *streamConn) startReading() {
	c.incoming = make(chan decoded)
	go c.readLoop(c.incoming)
}

func (c *streamConn) readLoop(incoming chan<- decoded) {
	for {
		d := c.readOne()
		select {
		case incoming <- d:
		case <-c.closed:
			return
		}
		if d.err != nil {
			return
		}
	}
}

// readOne reads and decodes the next value.
func (c *streamConn) readOne() decoded {
	raw, err := c.frames.next()
	if err != nil {
		// The deadline set once the server exited (see processCloser.watch) ends its stream.
		if c.exit != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			if exit := c.exit(); exit != nil {
				err = exit
			}
		}
		return decoded{err: err}
	}
	var d decoded
	d.msg, d.batch, d.refusal, d.err = decodeBatch(raw)
	return d
}

// frameReader reads the stream's JSON values as the SDK's connection does: a value may be
// preceded by blank space and span lines, and must be followed by a line's end. Most servers
// write one value per line; such a line is checked with json.Valid, which takes half the time
// of the decoder's scan (a third on large results). From the first line that is anything else
// (a value over several lines, two on one line, garbage), the rest of the stream, that line
// included, goes through the SDK's own algorithm, with the same messages and errors.
type frameReader struct {
	br   *bufio.Reader
	line []byte // a line longer than br's buffer, put together

	dec *json.Decoder // set once the stream is decoded as the SDK does
	lim *frameLimitReader
	raw json.RawMessage
}

// next returns the next value, valid JSON, until the next call.
func (f *frameReader) next() ([]byte, error) {
	for f.dec == nil {
		line, err := f.readLine()
		if err != nil && err != io.EOF {
			if len(line) > 0 {
				f.decodeFrom(line, err)
				break
			}
			return nil, err
		}
		body := bytes.TrimLeft(line, " \t\r\n")
		if len(body) == 0 {
			if err != nil {
				return nil, err // io.EOF, as the decoder returns it at the end
			}
			continue // a blank line
		}
		body = bytes.TrimSuffix(body, []byte{'\n'})
		if err == nil { // the line's end; at EOF there is none, and none is needed
			body = bytes.TrimSuffix(body, []byte{'\r'})
		}
		if last := body[len(body)-1]; last != ' ' && last != '\t' && last != '\r' && last != '\n' && json.Valid(body) {
			return body, nil
		}
		f.decodeFrom(line, err)
	}
	return f.decode()
}

// readLine reads up to and including the next newline, or to the end of the stream.
func (f *frameReader) readLine() ([]byte, error) {
	chunk, err := f.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return chunk, err
	}
	f.line = append(f.line[:0], chunk...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(f.line) > maxFrameBytes {
			return nil, errFrameTooLarge
		}
		chunk, err = f.br.ReadSlice('\n')
		f.line = append(f.line, chunk...)
	}
	return f.line, err
}

// decodeFrom switches to the SDK's algorithm, starting with line, then the rest of the stream
// (or err, when reading line ended with one).
func (f *frameReader) decodeFrom(line []byte, err error) {
	rest := io.Reader(f.br)
	if err != nil {
		rest = errReader{err}
	}
	f.lim = &frameLimitReader{r: io.MultiReader(bytes.NewReader(bytes.Clone(line)), rest), limit: maxFrameBytes}
	f.dec = json.NewDecoder(f.lim)
}

// decode is the SDK's reading of one value.
func (f *frameReader) decode() ([]byte, error) {
	f.lim.count = 0
	f.raw = f.raw[:0]
	if err := f.dec.Decode(&f.raw); err != nil {
		return nil, err
	}
	// What follows a value on its line must be the line's end.
	var next [1]byte
	if n, err := f.dec.Buffered().Read(next[:]); n > 0 {
		if next[0] != '\n' && next[0] != '\r' {
			return nil, errors.New("invalid trailing data at the end of stream")
		}
	} else if err != nil && err != io.EOF {
		return nil, err
	}
	return f.raw, nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// frameLimitReader bounds the bytes buffered for one message.
type frameLimitReader struct {
	r     io.Reader
	limit int
	count int
}

// errFrameTooLarge is the SDK's error for a message over the limit.
var errFrameTooLarge = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")

func (r *frameLimitReader) Read(p []byte) (int, error) {
	if r.count >= r.limit {
		return 0, errFrameTooLarge
	}
	if len(p) > r.limit-r.count {
		p = p[:r.limit-r.count]
	}
	n, err := r.r.Read(p)
	r.count += n
	return n, err
}

func (c *streamConn) SessionID() string { return "" }

func (c *streamConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && c.unanswered.Add(1) > maxUnanswered {
		// Closing ends the server's stdin, and so the writes of the answers blocked on it.
		_ = c.Close()
		return nil, fmt.Errorf("the server sent more than %d requests without reading their answers", maxUnanswered)
	}
	return msg, err
}

func (c *streamConn) read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		return next, nil
	}
	var d decoded
	for {
		switch {
		case c.incoming == nil && ctx.Done() == nil:
			d = c.readDirect()
		default:
			// A Read that ctx may end cannot wait in the stream's read: from now on a goroutine
			// reads (the SDK's reads are never cancelled, so this does not happen in practice).
			if c.incoming == nil {
				c.startReading()
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case d = <-c.incoming:
			case <-c.closed:
				return nil, io.EOF
			}
		}
		if d.err != nil {
			return nil, d.err
		}
		if d.refusal == nil {
			break
		}
		// Answered here, and the next value read. Not written on the reading goroutine: a
		// server that writes before it reads would hold the write, and the write the read.
		// Close ends it, as it ends the SDK's writes, and waits for it.
		refusal := d.refusal
		c.refusals.Go(func() {
			c.writeMu.Lock()
			defer c.writeMu.Unlock()
			_ = c.send(refusal) // a failed write fails the SDK's next one the same way
		})
	}
	if c.listed.Load() {
		c.screenListing(d.msg)
		for _, m := range d.batch {
			c.screenListing(m)
		}
	}
	if d.msg != nil {
		return d.msg, nil
	}
	c.queue = d.batch[1:]
	if err := c.trackBatch(d.batch); err != nil {
		return nil, err
	}
	return d.batch[0], nil
}

// screenListing screens the result of one of the hub's tools/list calls (see screenToolsPage).
func (c *streamConn) screenListing(m jsonrpc.Message) {
	resp, ok := m.(*jsonrpc.Response)
	if !ok {
		return
	}
	c.listMu.Lock()
	ours := c.listed.Load() && resp.ID == c.listing
	if ours {
		c.listed.Store(false)
	}
	c.listMu.Unlock()
	if !ours || resp.Error != nil {
		return
	}
	var left []string
	resp.Result, left = screenToolsPage(resp.Result)
	if left != nil && c.leftOut != nil {
		c.leftOut(left)
	}
}

// readDirect reads the next value on the caller's goroutine. Once reading has failed, it fails
// the same way again; once the connection is closing, every failure is the end of the stream,
// as a Read waiting for the read goroutine sees it.
func (c *streamConn) readDirect() decoded {
	if c.readErr == nil {
		if c.closing.Load() {
			c.readErr = io.EOF
		} else if d := c.readOne(); d.err == nil {
			return d
		} else {
			c.readErr = d.err
			if c.closing.Load() {
				c.readErr = io.EOF
			}
		}
	}
	return decoded{err: c.readErr}
}

// trackBatch records the calls of an incoming batch, whose responses go out together. (The
// SDK's connection counts the batch's notifications too, and so never answers a batch that has
// one: here a notification gets no response and is not waited for.)
func (c *streamConn) trackBatch(msgs []jsonrpc.Message) error {
	var b *msgBatch
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		if b == nil {
			b = &msgBatch{unresolved: map[jsonrpc.ID]int{}}
		}
		if _, dup := b.unresolved[req.ID]; dup {
			return fmt.Errorf("duplicate message ID %q", req.ID)
		}
		b.unresolved[req.ID] = len(b.responses)
		b.responses = append(b.responses, nil)
	}
	if b == nil {
		return nil
	}
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for id := range b.unresolved {
		if _, seen := c.batches[id]; seen {
			return fmt.Errorf("invalid request: batch contains previously seen request %v", id.Raw())
		}
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*msgBatch{}
	}
	for id := range b.unresolved {
		c.batches[id] = b
	}
	return nil
}

// resolveBatch records a response to a request that came in a batch. part reports whether it
// did; all is the batch's responses once the last one is in.
func (c *streamConn) resolveBatch(resp *jsonrpc.Response) (all []*jsonrpc.Response, part bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	b.responses[b.unresolved[resp.ID]] = resp
	delete(b.unresolved, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.unresolved) == 0 {
		return b.responses, true
	}
	return nil, true
}

func (c *streamConn) Write(ctx context.Context, msg jsonrpc.Message) (err error) {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	// A server that does not read its stdin blocks the write once the pipe is full (and every
	// write waiting for the lock behind it), whatever ctx says: when ctx ends first, every write
	// of the connection ends (the message may be cut, and the stream with it), so that a call's
	// deadline holds.
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, c.abort)
		defer func() {
			if !stop() {
				err = fmt.Errorf("writing to the server: %w", context.Cause(ctx))
			}
		}()
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		// A listing still waiting when the next starts was given up (its context ended): it is
		// replaced, and a late answer to it goes to the SDK as it came.
		c.listMu.Lock()
		c.listing = req.ID
		c.listed.Store(true)
		c.listMu.Unlock()
		defer func() {
			if err != nil { // never sent: no answer will come
				c.listMu.Lock()
				if c.listing == req.ID {
					c.listed.Store(false)
				}
				c.listMu.Unlock()
			}
		}()
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if resp, ok := msg.(*jsonrpc.Response); ok {
		defer c.unanswered.Add(-1)
		if all, part := c.resolveBatch(resp); part {
			if len(all) == 0 {
				return nil
			}
			data, err := encodeBatch(all)
			if err != nil {
				return err
			}
			return c.send(append(data, '\n'))
		}
	}
	data, err := c.enc.Encode(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	return c.send(data)
}

// errWritesAborted is the error of a write after abortWrites.
var errWritesAborted = errors.New("writing to the server: aborted (it does not read its stdin)")

func (c *streamConn) send(data []byte) error {
	if c.writesAborted.Load() {
		return errWritesAborted
	}
	_, err := c.w.Write(data)
	if err != nil && c.writesAborted.Load() {
		return errWritesAborted
	}
	return err
}

// abortWrites ends the write in progress and fails every later one: the stream's write deadline
// is set in the past, or, for a stream without deadlines, it is closed.
func (c *streamConn) abortWrites() {
	c.writesAborted.Store(true)
	if d, ok := c.w.(interface{ SetWriteDeadline(time.Time) error }); ok && d.SetWriteDeadline(time.Unix(1, 0)) == nil {
		return
	}
	if wc, ok := c.w.(io.Closer); ok {
		_ = wc.Close()
	}
}

func encodeBatch(msgs []*jsonrpc.Response) ([]byte, error) {
	raws := make([]json.RawMessage, 0, len(msgs))
	for _, m := range msgs {
		raw, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return nil, fmt.Errorf("encoding batch message: %w", err)
		}
		raws = append(raws, raw)
	}
	return json.Marshal(raws)
}

func (c *streamConn) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.closeErr = c.closer.Close()
		close(c.closed)
		c.refusals.Wait()
		if c.pollable != nil {
			// Ends a read in progress; the stream itself is its owner's to close.
			_ = c.pollable.SetReadDeadline(time.Unix(1, 0))
		}
	})
	return c.closeErr
}
