package provider

import (
	"context"
	"errors"
	"io"
	"time"
)

// DefaultIdleTimeout bounds each wait for a provider: for the response headers, and for the
// next bytes of the body. It is the overall default timeout of the official OpenAI and
// Anthropic SDKs: a reasoning model's non-streamed answer can take minutes before its first
// byte, and a stream's first token may come late too.
const DefaultIdleTimeout = 10 * time.Minute

// ErrIdle: the provider sent nothing for the idle bound, before its response headers or
// between two pieces of its body. The connection is closed.
var ErrIdle = errors.New("provider stopped answering")

// idleWatch cancels a call's context when one wait for the provider lasts longer than its
// bound. The timer runs only while nodmix waits (for headers, inside a body Read), not while
// the caller handles an event or a retry sleeps, so a slow reader never ends a call. One timer
// serves the whole call: there is no goroutine per read.
type idleWatch struct {
	ctx    context.Context // the request's context: canceled with ErrIdle when the bound passes
	cancel context.CancelCauseFunc
	d      time.Duration // <= 0: no bound
	t      *time.Timer
}

// newIdleWatch derives the request's context from ctx. stop must be called when the call ends.
func newIdleWatch(ctx context.Context, d time.Duration) *idleWatch {
	w := &idleWatch{d: d}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	return w
}

// arm starts one wait.
func (w *idleWatch) arm() {
	if w.d <= 0 {
		return
	}
	if w.t == nil {
		w.t = time.AfterFunc(w.d, func() { w.cancel(ErrIdle) })
		return
	}
	w.t.Reset(w.d)
}

// disarm ends one wait.
func (w *idleWatch) disarm() {
	if w.t != nil {
		w.t.Stop()
	}
}

// fired reports whether the bound ended the call.
func (w *idleWatch) fired() bool { return errors.Is(context.Cause(w.ctx), ErrIdle) }

// stop releases the timer and the context; the call is over.
func (w *idleWatch) stop() {
	w.disarm()
	w.cancel(context.Canceled)
}

// body bounds each Read of r by the watch.
func (w *idleWatch) body(r io.ReadCloser) io.ReadCloser { return &idleBody{r: r, w: w} }

type idleBody struct {
	r io.ReadCloser
	w *idleWatch
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.w.arm()
	n, err := b.r.Read(p)
	b.w.disarm()
	if err != nil && err != io.EOF && b.w.fired() {
		// The transport reports a canceled request; say why it was.
		err = ErrIdle
	}
	return n, err
}

func (b *idleBody) Close() error { return b.r.Close() }
