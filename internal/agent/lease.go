package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/session"
)

// leaser is a Sessions that leases sessions to turns, so that one turn at a time runs on a
// session in every process sharing the store (a gateway and `nodmix agent` on one state.db):
// a second turn is refused before it stores anything or calls a model, instead of storing its
// input on the first's and throwing away the first's paid-for answer. Implementations are safe
// for concurrent use; a lease is its holder's (its Token) until Unlease, expiry, DeleteSession
// or, once the holder's process is gone, another holder's Lease.
type leaser interface {
	// Lease takes key for h until ttl from now, or renews h's lease; session.ErrLeased while
	// another holder's lease is live.
	Lease(ctx context.Context, key string, h session.Holder, ttl time.Duration) error
	// Unlease ends h's lease of key, if h still holds it.
	Unlease(ctx context.Context, key, token string) error
}

// DefaultLeaseTTL is how long a turn's lease outlives its last renewal. A turn renews it every
// third of that, so it keeps its session for as long as it runs; a process killed mid-turn
// leaves the session leased this long at most, and not at all to a turn on its own host, which
// sees that the process is gone.
const DefaultLeaseTTL = 30 * time.Second

// lease takes the turn's session when the store leases sessions and keeps it, renewing, until
// release, which the turn must call on every path. A session leased to another turn is ErrBusy.
func (r *Runner) lease(ctx context.Context, key string) (release func(), err error) {
	l, ok := r.Sessions.(leaser)
	if !ok {
		return func() {}, nil
	}
	ttl := r.LeaseTTL
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	h := session.NewHolder(os.Getpid())
	if err := l.Lease(ctx, key, h, ttl); err != nil {
		if errors.Is(err, session.ErrLeased) {
			return nil, fmt.Errorf("session %q: %w", key, ErrBusy)
		}
		return nil, fmt.Errorf("session %q: %w", key, err)
	}
	// The lease outlives the turn's context: a cancelled turn still stores what was said.
	ctx = context.WithoutCancel(ctx)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	every := max(ttl/3, time.Millisecond) // a ticker's period must be positive
	wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			rctx, cancel := context.WithTimeout(ctx, every)
			err := l.Lease(rctx, key, h, ttl)
			cancel()
			if err == nil {
				continue
			}
			if r.Logger != nil {
				r.Logger.Warn("session lease: renew", "session", key, "err", err)
			}
			if errors.Is(err, session.ErrLeased) {
				// Another turn took it after it expired (this process was stopped, or the
				// store stalled): the Append checks still keep this turn from writing over it.
				return
			}
		}
	})
	return func() {
		close(stop)
		wg.Wait()
		uctx, cancel := context.WithTimeout(ctx, storeTimeout)
		defer cancel()
		if err := l.Unlease(uctx, key, h.Token); err != nil && r.Logger != nil {
			r.Logger.Warn("session lease: release", "session", key, "err", err)
		}
	}, nil
}
