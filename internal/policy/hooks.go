package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/procgroup"
)

// Hook limits.
const (
	DefaultHookTimeout = 5 * time.Second // as the config's default
	MaxHookTimeout     = 10 * time.Minute
	hookOutputCap      = 64 << 10 // bytes kept of each of stdout and stderr
	hookReasonCap      = 500      // characters of the reason shown to the model
	hookWaitDelay      = 2 * time.Second
)

// Hook is one tools.hooks.beforeCall entry.
type Hook struct {
	// Command is the argv to run; it is not passed through a shell.
	Command []string
	// Tools are globs (see Match) over tool ids and names; empty means every tool.
	Tools []string
	// Timeout bounds one run; 0 means DefaultHookTimeout. A hook that runs out of time blocks.
	Timeout time.Duration
}

// HookConfig configures the before-call hook gate.
type HookConfig struct {
	Hooks []Hook
	// Env is the hook's environment; nil inherits nodmix's own.
	Env []string
	// Dir is the hook's working directory; empty means nodmix's own.
	Dir string
	// Exempt names tools no hook sees, such as the Tool Search control tools whose target calls
	// are hooked themselves. Nil exempts nothing.
	Exempt func(*catalog.Tool) bool
	Log    *slog.Logger
}

// HookGate runs the before-call hooks of a call in order; the first one that does not allow it
// blocks it. It fails closed: a hook that cannot start, exits non-zero, or runs out of time blocks
// the call. It is safe for concurrent use.
type HookGate struct {
	cfg HookConfig
	log *slog.Logger
}

var _ dispatch.Gate = (*HookGate)(nil)

// NewHookGate validates cfg and returns the gate.
func NewHookGate(cfg HookConfig) (*HookGate, error) {
	for i, h := range cfg.Hooks {
		path := fmt.Sprintf("tools.hooks.beforeCall[%d]", i)
		if len(h.Command) == 0 || strings.TrimSpace(h.Command[0]) == "" {
			return nil, fmt.Errorf("%s.command: must be a non-empty array whose first element names the program", path)
		}
		if err := validatePatterns(path+".tools", h.Tools); err != nil {
			return nil, err
		}
		if h.Timeout < 0 || h.Timeout > MaxHookTimeout {
			return nil, fmt.Errorf("%s.timeoutMs: must be between 1 and %d", path, MaxHookTimeout.Milliseconds())
		}
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &HookGate{cfg: cfg, log: log}, nil
}

// hookInput is what a hook reads on stdin.
type hookInput struct {
	Tool    hookTool        `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Session string          `json:"session"`
}

type hookTool struct {
	ID     string         `json:"id"`
	Name   string         `json:"name"`
	Source catalog.Source `json:"source"`
}

// Check runs every hook that applies to the call.
func (g *HookGate) Check(ctx context.Context, call catalog.Call) error {
	t := call.Tool
	if t == nil || (g.cfg.Exempt != nil && g.cfg.Exempt(t)) {
		return nil
	}
	var input []byte
	for i, h := range g.cfg.Hooks {
		if len(h.Tools) > 0 {
			if _, ok := firstMatch(h.Tools, t); !ok {
				continue
			}
		}
		if input == nil {
			args := call.Args
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			var err error
			input, err = json.Marshal(hookInput{
				Tool:    hookTool{ID: t.ID, Name: t.Name, Source: t.Source},
				Args:    args,
				Session: call.Session,
			})
			if err != nil {
				return &dispatch.BlockedError{Reason: "before-call hook: the call cannot be encoded as JSON"}
			}
		}
		if err := g.run(ctx, i, h, input); err != nil {
			return err
		}
	}
	return nil
}

// run runs one hook and returns nil when it allows the call.
func (g *HookGate) run(ctx context.Context, i int, h Hook, input []byte) error {
	timeout := h.Timeout
	if timeout == 0 {
		timeout = DefaultHookTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(hctx, h.Command[0], h.Command[1:]...)
	cmd.Env = g.cfg.Env
	cmd.Dir = g.cfg.Dir
	cmd.Stdin = bytes.NewReader(input)
	stdout := &capped{max: hookOutputCap}
	stderr := &capped{max: hookOutputCap}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The hook may start children of its own; kill the whole group so that none outlives the
	// deadline, and stop waiting for pipes a straggler still holds after WaitDelay.
	procgroup.Own(cmd) // a hook's children die with it
	cmd.Cancel = func() error { return procgroup.Kill(cmd.Process.Pid) }
	cmd.WaitDelay = hookWaitDelay

	err := cmd.Run()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success():
		// The hook allowed the call; what kept its output open is a process it left in the
		// background, which is left alone as exec leaves one.
		g.log.Warn("before-call hook exited 0, but a process it started kept its output open; allowing the call", "hook", i)
		return nil
	case errors.Is(hctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		g.log.Warn("before-call hook timed out; blocking the call", "hook", i, "timeout", timeout)
		return &dispatch.BlockedError{Reason: fmt.Sprintf("before-call hook timed out after %s", timeout)}
	case ctx.Err() != nil:
		return &dispatch.BlockedError{Reason: "before-call hook was canceled"}
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		g.log.Warn("before-call hook could not run; blocking the call", "hook", i, "err", err)
		return &dispatch.BlockedError{Reason: fmt.Sprintf("before-call hook could not run: %v", err)}
	}
	reason := firstLine(stdout.Bytes())
	if reason == "" {
		reason = firstLine(stderr.Bytes())
	}
	if reason == "" {
		reason = fmt.Sprintf("before-call hook failed (%s)", exitErr)
	}
	return &dispatch.BlockedError{Reason: reason}
}

// firstLine returns the first non-blank line of b, with control characters removed and cut to
// hookReasonCap characters.
func firstLine(b []byte) string {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		s := strings.Map(func(r rune) rune {
			if r == utf8.RuneError || unicode.IsControl(r) {
				return -1
			}
			return r
		}, string(line))
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if utf8.RuneCountInString(s) > hookReasonCap {
			s = string([]rune(s)[:hookReasonCap-3]) + "..."
		}
		return s
	}
	return ""
}

// capped is a writer that keeps the first max bytes and discards the rest.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
		} else {
			c.buf.Write(p)
		}
	}
	return len(p), nil
}

func (c *capped) Bytes() []byte { return c.buf.Bytes() }
