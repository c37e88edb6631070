package mcphub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// toolExec runs one tool of one server.
type toolExec struct {
	d    *downstream
	name string
}

var _ catalog.Executor = toolExec{}

// Execute forwards the call. Failures of nodmix or of the connection (server down, connection
// lost, timeout, cancellation) are Go errors; an error the server answered with is a failed
// result the model reads.
func (x toolExec) Execute(ctx context.Context, call catalog.Call) (*catalog.Result, error) {
	return x.d.callTool(ctx, x.name, call.Args)
}

func (d *downstream) callTool(ctx context.Context, name string, args json.RawMessage) (*catalog.Result, error) {
	c, err := d.await(ctx)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	done := c.request(d.h.clock)
	res, err := c.cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
	done(err)
	if err != nil && cctx.Err() == nil {
		if why, ok := malformedResult(err); ok {
			// The server answered, and the connection is fine: what it answered cannot be read.
			// The model reads that, as it reads a refusal.
			msg := d.scrub.replace(fmt.Sprintf("mcp server %q: tools/call result: %s", d.cfg.Name, why))
			d.log.Warn("mcp server answered a tool call with a result that cannot be read", "tool", name, "why", d.scrub.replace(why))
			return catalog.ErrorResult(msg), nil
		}
	}
	if err != nil {
		err, refused := d.classify(ctx, cctx, c, "call to tool "+strconv.Quote(name), err)
		if refused {
			// The server is fine and said no (bad arguments, unknown tool): the model reads why.
			return catalog.ErrorResult(err.Error()), nil
		}
		return nil, err
	}
	return fromCallResult(res)
}

// classify turns the error of a request to the server into the error to report. refused is
// true when the server itself answered with a JSON-RPC error.
func (d *downstream) classify(ctx, cctx context.Context, c *conn, what string, err error) (_ error, refused bool) {
	server := d.cfg.Name
	var wire *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("mcp server %q: %s cancelled: %w", server, what, context.Cause(ctx)), false
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("mcp server %q: %s timed out after %s: %w", server, what, d.timeout, context.DeadlineExceeded), false
	case errors.As(err, &wire):
		// The SDK's "calling ..." prefix says nothing the reader needs; the server's message does.
		// The MCP face passes the JSON-RPC error on to its client: a copy without the secrets.
		clean := &jsonrpc.Error{Code: wire.Code, Message: d.scrub.replace(wire.Message)}
		if data := d.scrub.replace(string(wire.Data)); json.Valid([]byte(data)) {
			clean.Data = json.RawMessage(data)
		}
		return &refusedError{msg: fmt.Sprintf("mcp server %q refused the %s: %s", server, what, clean.Message), err: clean}, true
	case connectionLost(err) || c.diedWithin(time.Second):
		return &lostError{server: server, what: what, err: d.scrub.err(err)}, false
	default:
		return fmt.Errorf("mcp server %q: %s: %w", server, what, d.scrub.err(err)), false
	}
}

// refusedError is a JSON-RPC error the server answered with; it unwraps to a *jsonrpc.Error
// with its code, and its message and data without the server's secrets.
type refusedError struct {
	msg string
	err error
}

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return e.err }

func connectionLost(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// lostError is a call whose connection died under it. The hub restarts the server by itself.
type lostError struct {
	server, what string
	err          error
}

func (e *lostError) Error() string {
	return fmt.Sprintf("mcp server %q: connection lost during %s (the server is being restarted): %v", e.server, e.what, e.err)
}

func (e *lostError) Unwrap() []error { return []error{catalog.ErrUnavailable, e.err} }

// fromCallResult converts an MCP result. Text parts stay text; every other part (images, audio,
// resource links, embedded resources, annotated text) keeps its exact MCP JSON in Raw.
func fromCallResult(r *mcp.CallToolResult) (*catalog.Result, error) {
	var out *catalog.Result
	if len(r.Content) == 1 {
		// The usual result, one part: the result and its part in one allocation.
		one := &struct {
			res     catalog.Result
			content [1]catalog.Content
		}{}
		out = &one.res
		out.Content = one.content[:0]
	} else {
		out = &catalog.Result{Content: make([]catalog.Content, 0, len(r.Content))}
	}
	out.IsError = r.IsError
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok && t.Meta == nil && t.Annotations == nil {
			out.Content = append(out.Content, catalog.Content{Type: "text", Text: t.Text})
			continue
		}
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("encoding result content: %w", err)
		}
		var head struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(raw, &head)
		out.Content = append(out.Content, catalog.Content{Type: head.Type, Text: head.Text, Raw: raw})
	}
	if r.StructuredContent != nil {
		b, err := json.Marshal(r.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("encoding structured content: %w", err)
		}
		out.Structured = b
	}
	return out, nil
}
