package sandbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// DefaultWarm is the number of idle children a pool keeps ready unless told otherwise.
const DefaultWarm = 2

// DefaultMaxRunning is the number of runs a pool lets proceed at once unless told otherwise.
// Each child may grow to its Limits.MemoryBytes (DefaultMemoryBytes: 256 MiB), so the cap is
// what bounds the memory of many tool_search_code calls arriving together (one model step may
// make several), at about 2 GiB with the defaults.
const DefaultMaxRunning = 8

// DefaultStartTimeout bounds a child's start, up to its hello.
const DefaultStartTimeout = 10 * time.Second

// Options configure a [Pool].
type Options struct {
	// Command is the argv that starts a child, normally {os.Executable(), ChildArg}. Required.
	Command []string
	// Warm is the number of started, idle children kept ready: 0 means DefaultWarm, a negative
	// value keeps none (every run then starts its own child).
	Warm int
	// Dir is the children's working directory. Empty means an empty directory that the pool
	// creates and removes on Close.
	Dir string
	// MaxRunning is the most runs in progress at once: 0 means DefaultMaxRunning. A run beyond
	// it waits for one to end, up to its Limits.Timeout.
	MaxRunning int
	// StartTimeout bounds one child start; 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// Logger receives debug and failure logs; nil discards them.
	Logger *slog.Logger
}

// SelfCommand is the Options.Command that starts children from the running binary, which must
// dispatch [ChildArg] to [ChildMain].
func SelfCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: locate own executable: %w", err)
	}
	return []string{exe, ChildArg}, nil
}

// Pool runs code in sandbox children. Each child serves exactly one run and is then killed, so
// no state can leak between runs; a few started children are kept idle so that a run does not
// wait for a process start, and are replaced in the background. Safe for concurrent use: each
// concurrent Run has its own child, up to Options.MaxRunning at once. The owner must call Close.
type Pool struct {
	argv         []string
	warm         int
	dir          string
	ownDir       bool
	startTimeout time.Duration
	log          *slog.Logger

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	idle   chan *child
	kick   chan struct{}
	slots  chan struct{} // one value per run in progress, up to Options.MaxRunning

	mu        sync.Mutex
	closed    bool
	refilling bool
	wg        sync.WaitGroup // the refiller and every Run or Available in progress
}

// NewPool validates opts and returns a pool. No child starts until the first Run or Available.
func NewPool(opts Options) (*Pool, error) {
	if len(opts.Command) == 0 || strings.TrimSpace(opts.Command[0]) == "" {
		return nil, errors.New("sandbox: Options.Command: must name the program that starts a child")
	}
	if opts.StartTimeout < 0 {
		return nil, errors.New("sandbox: Options.StartTimeout: must not be negative")
	}
	if opts.MaxRunning < 0 {
		return nil, errors.New("sandbox: Options.MaxRunning: must not be negative")
	}
	p := &Pool{
		argv:         append([]string(nil), opts.Command...),
		warm:         opts.Warm,
		dir:          opts.Dir,
		startTimeout: opts.StartTimeout,
		log:          opts.Logger,
		kick:         make(chan struct{}, 1),
	}
	if p.warm == 0 {
		p.warm = DefaultWarm
	}
	p.warm = max(p.warm, 0)
	if p.startTimeout == 0 {
		p.startTimeout = DefaultStartTimeout
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.dir == "" {
		dir, err := os.MkdirTemp("", "nodmix-sandbox-")
		if err != nil {
			return nil, fmt.Errorf("sandbox: create working directory: %w", err)
		}
		p.dir, p.ownDir = dir, true
	}
	p.idle = make(chan *child, p.warm)
	p.slots = make(chan struct{}, cmp.Or(opts.MaxRunning, DefaultMaxRunning))
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// Run executes code — the body of an async function — in a fresh child and returns what it
// returned and logged.
//
// A failure of the code itself (a throw, a syntax error, a limit, the timeout, ctx ending, the
// child dying) is a *CodeError whose Message is meant for the model, returned together with a
// non-nil Result holding the logs gathered so far. Any other error is the sandbox's own:
// ErrUnavailable when no child could start, ErrClosed after Close, or a broken protocol.
func (p *Pool) Run(ctx context.Context, code string, b Bridge, lim Limits) (*Result, error) {
	if strings.TrimSpace(code) == "" {
		return &Result{}, codeErr(KindInvalid, "%s", msgEmptyCode)
	}
	if len(code) > MaxCodeBytes {
		return &Result{}, codeErr(KindInvalid, "code must be at most %d bytes.", MaxCodeBytes)
	}
	if b == nil {
		return nil, errors.New("sandbox: Run: bridge must not be nil")
	}
	lim, err := lim.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.wg.Done()

	if err := p.takeSlot(ctx, lim.Timeout); err != nil {
		if errors.Is(err, ErrClosed) {
			return nil, err
		}
		return &Result{}, err
	}
	c, err := p.acquire(ctx)
	if err != nil {
		<-p.slots
		if ctx.Err() != nil {
			return &Result{}, &CodeError{Kind: KindAborted, Message: msgAborted, err: context.Cause(ctx)}
		}
		if p.ctx.Err() != nil {
			return nil, ErrClosed
		}
		return nil, err
	}
	p.log.Debug("sandbox: run", "warm", c.warm, "pid", c.cmd.Process.Pid)
	res, err := c.run(ctx, p.ctx.Done(), code, b, lim, p.log)
	// Reaping a process takes as long as the run itself; the caller need not wait for it. The
	// slot stays taken until the child is gone: its memory is what the cap bounds.
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		c.close()
		<-p.slots
	}()
	return res, err
}

// takeSlot waits for a run slot, up to wait. Its errors are ErrClosed or the *CodeError the run
// fails with.
func (p *Pool) takeSlot(ctx context.Context, wait time.Duration) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	default:
	}
	p.log.Debug("sandbox: waiting for a run to end", "running", cap(p.slots))
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &CodeError{Kind: KindAborted, Message: msgAborted, err: context.Cause(ctx)}
	case <-p.ctx.Done():
		return ErrClosed
	case <-timer.C:
		return codeErr(KindTimeout, msgBusy, cap(p.slots))
	}
}

// Available reports whether a child can start here, by starting one (which then waits in the
// pool for the next run). A non-nil error wraps ErrUnavailable: code mode should fall back to
// the structured tools.
func (p *Pool) Available(ctx context.Context) error {
	if err := p.enter(); err != nil {
		return err
	}
	defer p.wg.Done()
	select {
	case c := <-p.idle:
		if c.alive() {
			p.putIdle(c)
			return nil
		}
		c.close()
	default:
	}
	c, err := p.start(ctx, true)
	if err != nil {
		return err
	}
	p.putIdle(c)
	p.kickRefill()
	return nil
}

// Close kills every child, waits for runs in progress to end (they fail with ErrClosed) and
// for the pool's goroutines, and removes the working directory it created. Idempotent.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	for {
		select {
		case c := <-p.idle:
			c.close()
			continue
		default:
		}
		break
	}
	if p.ownDir {
		if err := os.RemoveAll(p.dir); err != nil {
			return fmt.Errorf("sandbox: remove working directory: %w", err)
		}
	}
	return nil
}

// enter registers a Run or Available with the pool and starts the refiller on first use.
func (p *Pool) enter() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.wg.Add(1)
	if !p.refilling && p.warm > 0 {
		p.refilling = true
		p.wg.Add(1)
		go p.refill()
	}
	return nil
}

// acquire takes an idle child or, if none is ready, starts one.
func (p *Pool) acquire(ctx context.Context) (*child, error) {
	for {
		select {
		case c := <-p.idle:
			p.kickRefill()
			if c.alive() {
				return c, nil
			}
			c.close()
			continue
		default:
		}
		break
	}
	p.kickRefill()
	return p.start(ctx, false)
}

// start starts one child, bounded by ctx, the start timeout and the pool's life.
func (p *Pool) start(ctx context.Context, warm bool) (*child, error) {
	ctx, cancel := context.WithTimeout(ctx, p.startTimeout)
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()
	c, err := startChild(ctx, p.argv, p.dir, warm)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	c.warm = warm
	p.log.Debug("sandbox: child started", "pid", c.cmd.Process.Pid, "warm", warm)
	return c, nil
}

func (p *Pool) putIdle(c *child) {
	select {
	case p.idle <- c:
	default:
		c.close()
	}
}

func (p *Pool) kickRefill() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// refill keeps the idle set full. After a failed start it waits for the next kick (the next
// run) rather than retrying on its own, so a broken setup costs one attempt per run, not a loop.
func (p *Pool) refill() {
	defer p.wg.Done()
	for {
		for len(p.idle) < cap(p.idle) && p.ctx.Err() == nil {
			c, err := p.start(p.ctx, true)
			if err != nil {
				if p.ctx.Err() == nil {
					p.log.Warn("sandbox: start warm child", "err", err)
				}
				break
			}
			p.putIdle(c)
		}
		select {
		case <-p.kick:
		case <-p.ctx.Done():
			return
		}
	}
}
