package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/jsondepth"
)

// rssInterval is how often the parent samples a running child's resident size (Linux only).
const rssInterval = 20 * time.Millisecond

// residentCap is the parent's backstop on a child's resident memory: well above what the
// child's own heap watchdog allows, so it only fires when that watchdog could not (a single
// huge native allocation). Race builds carry shadow memory, hence the larger factor.
func residentCap(memoryBytes int64) uint64 {
	if raceEnabled {
		return uint64(memoryBytes)*6 + 1<<30
	}
	return uint64(memoryBytes)*2 + 256<<20
}

// lineCap bounds one message from the child during a run: a value or bridge arguments of up
// to MaxResultBytes, or a log line of up to MaxLogBytes that JSON may escape up to sixfold.
func lineCap(l Limits) int64 {
	return 6*int64(max(l.MaxResultBytes, l.MaxLogBytes)) + 64<<10
}

type bridgeOutcome struct {
	id    string
	value json.RawMessage
	err   error
}

// run drives one run on c and leaves c killed; the caller reaps it. poolDone ends the run when
// the pool closes. The caller has validated code and lim.
func (c *child) run(ctx context.Context, poolDone <-chan struct{}, code string, b Bridge, lim Limits, log *slog.Logger) (res *Result, err error) {
	res = &Result{Warm: c.warm}
	started := time.Now()
	clock := newBudget(lim.Timeout)
	w := startWriter(c.stdin, lim.MaxBridgeCalls+2)
	bctx, bcancel := context.WithCancel(ctx)
	var bridges sync.WaitGroup
	results := make(chan bridgeOutcome)
	inflight, sent, logBytes := 0, 0, 0
	defer func() {
		// Kill first, even after a result: it unblocks a writer stuck on the pipe of a child
		// that stopped reading (one that failed with bridge calls outstanding, or one that sent
		// its result without reading the last bridge result in full). The child has nothing
		// left to do either way.
		c.kill()
		w.stop()
		bcancel()
		bridges.Wait()
		clock.stop()
		res.Duration, res.HostWait = time.Since(started), clock.paused()
	}()

	c.maxLine.Store(lineCap(lim))
	w.send(message{Type: msgRun, Code: code, Limits: &wireLimits{
		MemoryBytes:    lim.MemoryBytes,
		MaxLogBytes:    lim.MaxLogBytes,
		MaxResultBytes: lim.MaxResultBytes,
		MaxBridgeCalls: lim.MaxBridgeCalls,
	}})

	var rssTick <-chan time.Time
	if _, ok := residentBytes(c.cmd.Process.Pid); ok {
		t := time.NewTicker(rssInterval)
		defer t.Stop()
		rssTick = t.C
	}
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				return res, c.exitError(lim)
			}
			switch m.Type {
			case msgLog:
				// The child enforces the cap; the parent re-checks rather than trust it.
				if m.Truncated {
					res.LogsTruncated = true
				}
				if m.Line == "" && m.Truncated {
					continue
				}
				if logBytes += len(m.Line) + 1; logBytes > lim.MaxLogBytes {
					res.LogsTruncated = true
					continue
				}
				res.Logs = append(res.Logs, m.Line)
			case msgBridge:
				res.BridgeCalls++
				if res.BridgeCalls > lim.MaxBridgeCalls {
					return res, codeErr(KindLimit, "%s", bridgeCapMessage(lim.MaxBridgeCalls))
				}
				inflight++
				bridges.Add(1)
				go func() {
					defer bridges.Done()
					o := serveBridge(bctx, b, m, log)
					select {
					case results <- o:
					case <-bctx.Done():
					}
				}()
			case msgWait:
				// Idle on the host only if every result sent so far has been consumed.
				if m.Seen == sent && inflight > 0 {
					clock.pause()
				}
			case msgResult:
				return res, resultError(m, res, lim, log)
			default:
				return res, fmt.Errorf("sandbox: unexpected %q message from child", m.Type)
			}
		case o := <-results:
			inflight--
			sent++
			reply := message{Type: msgBridgeResult, ID: o.id, OK: o.err == nil, Value: o.value}
			if o.err != nil {
				reply.Error = o.err.Error()
			}
			w.send(reply)
			clock.resume()
		case <-clock.expired():
			return res, codeErr(KindTimeout, "%s", msgTimedOut)
		case <-ctx.Done():
			return res, &CodeError{Kind: KindAborted, Message: msgAborted, err: context.Cause(ctx)}
		case <-poolDone:
			return res, ErrClosed
		case <-rssTick:
			if n, ok := residentBytes(c.cmd.Process.Pid); ok && n > residentCap(lim.MemoryBytes) {
				return res, codeErr(KindLimit, "%s", memoryMessage(lim.MemoryBytes))
			}
		}
	}
}

// resultError maps the child's result message onto Result.Value or a CodeError. The child
// bounds the value's depth and the text of a failure; the parent bounds them again rather than
// trust it. The text of an internal failure is nodmix's own (Go errors, panics) and goes to the log,
// not to the model.
func resultError(m message, res *Result, lim Limits, log *slog.Logger) error {
	if m.OK {
		// Its size is bounded by the line cap.
		if jsondepth.Deeper(m.Value, MaxValueDepth) {
			return codeErr(KindLimit, "%s", resultDepthMessage())
		}
		res.Value = m.Value
		return nil
	}
	if m.Kind == wireInternal {
		log.Warn("sandbox: internal error", "detail", boundText(m.Error, 4096))
		return &CodeError{Kind: KindInternal, Message: msgInternal}
	}
	m.Error = boundText(m.Error, lim.MaxResultBytes)
	kind := KindThrown
	switch m.Kind {
	case wireLimit:
		kind = KindLimit
	case wireNeverSettled:
		kind = KindNeverSettled
	case wireAborted:
		kind = KindAborted
	case wireInternal:
		kind = KindInternal
	}
	return &CodeError{Kind: kind, Message: m.Error}
}

// serveBridge answers one bridge request. A panicking Bridge fails the call, not nodmix.
func serveBridge(ctx context.Context, b Bridge, m message, log *slog.Logger) (o bridgeOutcome) {
	o.id = m.ID
	defer func() {
		if r := recover(); r != nil {
			log.Error("sandbox: bridge panicked", "method", m.Method, "panic", r)
			o.value, o.err = nil, errors.New(msgBridgePanic)
		}
	}()
	v, err := dispatchBridge(ctx, b, m.Method, m.Args)
	if err != nil {
		o.err = err
		return o
	}
	switch {
	case len(v) == 0:
		v = json.RawMessage("null")
	case !json.Valid(v):
		log.Warn("sandbox: bridge returned invalid JSON", "method", m.Method)
		o.err = errors.New(msgBridgeBadJSON)
		return o
	}
	o.value = v
	return o
}

// dispatchBridge validates a request's arguments as the reference does and calls the host. The
// child has checked them too; the host does not trust it.
func dispatchBridge(ctx context.Context, b Bridge, method string, args json.RawMessage) (json.RawMessage, error) {
	switch method {
	case methodSearch:
		var a searchArgs
		if json.Unmarshal(args, &a) != nil || a.Query == nil {
			return nil, errors.New(msgSearchQuery)
		}
		return b.Search(ctx, *a.Query, max(a.Limit, 0))
	case methodDescribe:
		var a describeArgs
		if json.Unmarshal(args, &a) != nil || a.ID == nil {
			return nil, errors.New(msgDescribeID)
		}
		return b.Describe(ctx, *a.ID)
	case methodCall:
		var a callArgs
		if json.Unmarshal(args, &a) != nil || a.ID == nil {
			return nil, errors.New(msgCallID)
		}
		if len(a.Args) == 0 {
			a.Args = json.RawMessage("null")
		}
		if jsondepth.Deeper(a.Args, MaxValueDepth) {
			return nil, errors.New(bridgeArgsDepthMessage())
		}
		return b.Call(ctx, *a.ID, a.Args)
	default:
		return nil, errors.New(msgUnsupported)
	}
}

// writer feeds the child's stdin from its own goroutine, so the run loop never blocks on a
// child that is busy and not reading. The queue holds every message a run can send (the run
// message plus one result per allowed bridge call), so send never blocks either.
type writer struct {
	q    chan message
	done chan struct{}
}

func startWriter(w io.Writer, capacity int) *writer {
	wr := &writer{q: make(chan message, capacity), done: make(chan struct{})}
	go func() {
		defer close(wr.done)
		for m := range wr.q {
			b, err := encodeMessage(m)
			if err == nil {
				_, err = w.Write(b)
			}
			if err != nil {
				// The child is gone or going; the run loop learns it from the reader.
				for range wr.q {
				}
				return
			}
		}
	}()
	return wr
}

func (w *writer) send(m message) {
	select {
	case w.q <- m:
	default:
		// Unreachable while the run enforces MaxBridgeCalls; dropping beats blocking.
	}
}

// stop waits for the writer; the child must be dead or reading, or this blocks.
func (w *writer) stop() {
	close(w.q)
	<-w.done
}

// budget is the run's clock: a timer that can be paused while the child waits on the host.
type budget struct {
	timer    *time.Timer
	left     time.Duration
	since    time.Time
	running  bool
	pausedAt time.Time
	total    time.Duration
}

func newBudget(d time.Duration) *budget {
	return &budget{timer: time.NewTimer(d), left: d, since: time.Now(), running: true}
}

func (b *budget) expired() <-chan time.Time { return b.timer.C }

func (b *budget) pause() {
	if !b.running {
		return
	}
	now := time.Now()
	b.left -= now.Sub(b.since)
	b.timer.Stop()
	b.running, b.pausedAt = false, now
}

func (b *budget) resume() {
	if b.running {
		return
	}
	now := time.Now()
	b.total += now.Sub(b.pausedAt)
	b.since, b.running = now, true
	b.timer.Reset(max(b.left, 0))
}

func (b *budget) paused() time.Duration {
	if !b.running {
		return b.total + time.Since(b.pausedAt)
	}
	return b.total
}

func (b *budget) stop() { b.timer.Stop() }
