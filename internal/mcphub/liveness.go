package mcphub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A server can hang and still read its stdin (a deadlock, a wait on something that never comes):
// its session stays up, and each call to it times out on its own while the server is never
// restarted. So serve pings a server that has been idle for the ping interval; a ping without an
// answer within the ping timeout ends the session, and the run loop restarts the server as it
// does one that died.
//
// Idle means no request of the hub's in flight and no answer to one for the interval. A server
// busy with a call is not pinged: many servers handle one request at a time, and a ping behind a
// long call would kill a healthy server. The answer to any request proves the server alive, so a
// server in use is not pinged at all.

// answered reports whether err, a request's outcome, is an answer of the server's: a result or a
// JSON-RPC error.
func answered(err error) bool {
	if err == nil {
		// Before the target is declared: errors.As makes it escape, which would cost every
		// successful call an allocation.
		return true
	}
	var wire *jsonrpc.Error
	return errors.As(err, &wire)
}

// request marks a request of the hub's to the server as in flight until done is called with its
// outcome; an answer counts as a sign of life.
func (c *conn) request(clk clock) (done func(error)) {
	c.inflight.Add(1)
	return func(err error) {
		// heard before inflight, so that a check that sees nothing in flight sees the answer.
		if answered(err) {
			c.heard.Store(clk.Now().UnixNano())
		}
		c.inflight.Add(-1)
	}
}

// checkAlive pings the server if it has been idle for the ping interval, and returns how long to
// wait before the next check, or why the session is to end.
func (d *downstream) checkAlive(ctx context.Context, c *conn) (time.Duration, error) {
	interval, clk := d.h.pingInterval, d.h.clock
	if c.inflight.Load() > 0 {
		return interval, nil
	}
	if wait := interval - clk.Now().Sub(time.Unix(0, c.heard.Load())); wait > 0 {
		return wait, nil
	}
	if err := d.ping(ctx, c); err != nil {
		return 0, err
	}
	return interval, nil
}

// ping sends one ping and waits, on the hub's clock, for its answer. The ping runs on a goroutine
// of its own so that the hub's clock (not a context's timer) bounds the wait; ping waits for it.
func (d *downstream) ping(ctx context.Context, c *conn) error {
	clk, timeout := d.h.clock, d.h.pingTimeout
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sent := clk.Now().UnixNano()
	res := make(chan error, 1)
	go func() { res <- c.cs.Ping(pctx, nil) }()
	deadline, stop := clk.After(timeout)
	defer stop()
	var err error
	select {
	case err = <-res:
	case <-deadline:
		cancel()
		<-res
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// The answer to a call sent after the ping proves the server alive too (a server may
		// answer in an order of its own).
		if c.heard.Load() > sent {
			return nil
		}
		return fmt.Errorf("no answer to a ping within %s: the server seems hung", formatDelay(timeout))
	}
	switch {
	case answered(err):
		// A JSON-RPC error is an answer too: the server lives, even if it knows no ping.
		c.heard.Store(clk.Now().UnixNano())
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case c.diedWithin(time.Second):
		return d.deadErr(c)
	default:
		return d.scrub.err(fmt.Errorf("ping: %w", err))
	}
}
