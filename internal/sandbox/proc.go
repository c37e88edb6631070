package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/procgroup"
)

const (
	// stderrCap is how much of the child's stderr the parent keeps (the tail).
	stderrCap = 64 << 10
	// stderrPreview is how much of the trimmed tail goes into the child-exited message.
	stderrPreview = 500
	// handshakeLine bounds messages before a run has set its own limits.
	handshakeLine = 64 << 10
	// exitGrace is how long a child that closed its stdout may take to exit on its own before
	// it is killed, so that its real exit status is what gets reported.
	exitGrace = 2 * time.Second
)

// child is the parent's handle on one sandbox process. It is used by one goroutine at a time
// (the pool, then one Run); close may be called from any goroutine and waits for the reader and
// waiter goroutines the handle owns.
type child struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *tailBuffer
	msgs    chan message  // decoded messages; closed when the reader stops
	quit    chan struct{} // closed by close: the reader stops delivering
	read    chan struct{} // closed when the reader has stopped
	exited  chan struct{} // closed when the process has been reaped
	readErr error         // why the reader stopped; valid once read is closed
	maxLine atomic.Int64
	warm    bool

	killOnce sync.Once
}

// startChild starts argv in dir and waits for its hello. The environment holds only the Go
// runtime's processor count, which the child would set itself (hardenProcess), and, in a child
// started for a waiting run (not warm), the variable that tells it to skip its warm-up. With
// GOMAXPROCS set, the runtime's start skips sizing itself from the CPU count and the cgroup's
// quota (four file reads; on a large machine also a P per CPU, then a stop of the world to
// shrink to two). On a 2-CPU machine the gain is within the noise of a child's start.
func startChild(ctx context.Context, argv []string, dir string, warm bool) (*child, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if warm {
		cmd.Env = []string{childProcsEnv}
	} else {
		cmd.Env = []string{childProcsEnv, coldEnvKey + "=1"}
	}
	cmd.Dir = dir
	c := &child{
		cmd:    cmd,
		stderr: &tailBuffer{max: stderrCap},
		msgs:   make(chan message),
		quit:   make(chan struct{}),
		read:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	c.maxLine.Store(handshakeLine)
	cmd.Stderr = c.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	c.stdin = stdin
	// In a group of its own and, on Linux, killed when nodmix dies: a nodmix killed outright
	// or crashed cannot kill its children, and a child inside one native call (a regexp
	// backtracking) never sees its watchdog notice that the parent is gone.
	if err := procgroup.Start(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	go c.readLoop(stdout)
	go func() {
		// Wait closes stdout, so it must follow the reader; it also drains stderr.
		<-c.read
		_ = cmd.Wait()
		close(c.exited)
	}()

	select {
	case m, ok := <-c.msgs:
		if !ok {
			return nil, c.startFailure()
		}
		if m.Type != msgHello {
			c.close()
			return nil, fmt.Errorf("child sent %q before hello", m.Type)
		}
		return c, nil
	case <-ctx.Done():
		c.close()
		return nil, fmt.Errorf("wait for child hello: %w", context.Cause(ctx))
	}
}

func (c *child) startFailure() error {
	if c.readErr != nil && !errors.Is(c.readErr, io.EOF) {
		c.close()
		return fmt.Errorf("child hello: %w", c.readErr)
	}
	c.awaitExit()
	return errors.New(c.exitMessage())
}

func (c *child) readLoop(stdout io.Reader) {
	defer close(c.read)
	defer close(c.msgs)
	br := bufio.NewReaderSize(stdout, 64<<10)
	// The cap is read as each line arrives, not when the read starts: the reader is already
	// waiting for the first message of a run when the run raises the cap from handshakeLine.
	limit := func() int { return int(c.maxLine.Load()) }
	for {
		line, err := readLineLimit(br, limit)
		if err != nil {
			c.readErr = err
			return
		}
		m, err := decodeMessage(line)
		if err != nil {
			c.readErr = err
			return
		}
		select {
		case c.msgs <- m:
		case <-c.quit:
			return
		}
	}
}

// alive reports whether an idle child is still there to serve a run.
func (c *child) alive() bool {
	select {
	case <-c.read:
		return false
	default:
		return true
	}
}

// kill stops the process without waiting for it. Idempotent.
func (c *child) kill() {
	c.killOnce.Do(func() {
		close(c.quit)
		_ = c.cmd.Process.Kill()
	})
}

// close kills the process and waits until it has been reaped. Idempotent.
func (c *child) close() {
	c.kill()
	<-c.exited
}

// awaitExit waits for a child that stopped talking to exit by itself, then reaps it.
func (c *child) awaitExit() {
	t := time.NewTimer(exitGrace)
	defer t.Stop()
	select {
	case <-c.exited:
	case <-t.C:
	}
	c.close()
}

// exitMessage is the reference's "tool_search_code child exited with <signal|code>[: tail]".
// Valid after the child has been reaped.
func (c *child) exitMessage() string {
	msg := msgChildExitPrefix + exitDescription(c.cmd.ProcessState)
	if tail := c.stderr.preview(stderrPreview); tail != "" {
		msg += ": " + tail
	}
	return msg
}

// exitError explains a child that stopped talking in the middle of a run. Crashes whose cause
// is known (the address-space cap, Go stack exhaustion) get the message of the limit they hit.
func (c *child) exitError(lim Limits) error {
	if errors.Is(c.readErr, errMessageTooLarge) {
		// The child bounds everything it sends; a line over the cap is what a value the bounds
		// missed looks like, so the model reads it as the limit it is.
		c.close()
		return codeErr(KindLimit, "%s", resultSizeMessage(lim.MaxResultBytes))
	}
	if c.readErr != nil && !errors.Is(c.readErr, io.EOF) {
		c.close()
		return fmt.Errorf("sandbox: read from child: %w", c.readErr)
	}
	c.awaitExit()
	tail := c.stderr.String()
	switch {
	case strings.Contains(tail, "fatal error: out of memory"),
		strings.Contains(tail, "runtime: out of memory"):
		return codeErr(KindLimit, "%s", memoryMessage(lim.MemoryBytes))
	case strings.Contains(tail, "goroutine stack exceeds"):
		return codeErr(KindThrown, "%s", msgStackOverflow)
	}
	return codeErr(KindChildExited, "%s", c.exitMessage())
}

// tailBuffer keeps the last max bytes written to it and counts what it discarded.
type tailBuffer struct {
	mu        sync.Mutex
	max       int
	buf       []byte
	discarded int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.discarded += int64(len(t.buf) + len(p) - t.max)
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.discarded += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// preview is the last n bytes of the trimmed tail, followed by a notice of what was left out:
// bytes discarded over the cap and bytes dropped from the preview.
func (t *tailBuffer) preview(n int) string {
	t.mu.Lock()
	text, discarded := strings.TrimSpace(string(t.buf)), t.discarded
	t.mu.Unlock()
	if text == "" {
		return ""
	}
	dropped := 0
	if len(text) > n {
		cut := len(text) - n
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		dropped, text = cut, text[cut:]
	}
	var notes []string
	if discarded > 0 {
		notes = append(notes, fmt.Sprintf("%d bytes over the %d KiB stderr cap discarded", discarded, stderrCap>>10))
	}
	if dropped > 0 {
		notes = append(notes, fmt.Sprintf("%d more bytes not shown", dropped))
	}
	if len(notes) > 0 {
		text = strings.TrimSpace(text + " [" + strings.Join(notes, "; ") + "]")
	}
	return text
}
