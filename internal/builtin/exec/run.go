//go:build unix

package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nodmix/nodmix/internal/procgroup"
)

// run starts req in its own process group, with stdin from the null device and stdout and stderr
// on one pipe (so their order is kept), and waits for it. On timeout or cancellation of ctx the
// whole group is killed with SIGKILL; after the command exits, run waits at most waitDelay for
// other holders of the pipe (a daemon it started) before it closes the pipe and returns.
func run(ctx context.Context, req *request, o *Options) outcome {
	start := time.Now()
	// A bad cwd is refused before the command is built: building it searches PATH.
	if req.cwd != "" {
		if fi, err := os.Stat(req.cwd); err != nil || !fi.IsDir() {
			reason := "not a directory"
			if err != nil {
				reason = "no such directory"
				if !errors.Is(err, os.ErrNotExist) {
					reason = "cannot be read"
				}
			}
			return outcome{exitCode: -1, spawnErr: fmt.Errorf("cwd: %q: %s", req.cwd, reason), duration: time.Since(start)}
		}
	}
	env, err := o.environ()
	if err != nil {
		return outcome{exitCode: -1, spawnErr: err, duration: time.Since(start)}
	}
	runCtx, cancel := context.WithTimeout(ctx, req.timeout)
	defer cancel()

	// The child writes stdout and stderr to one pipe, so their order is kept. The pipe is ours,
	// not os/exec's, so that a process holding it past waitDelay is noticed whatever the exit
	// status (os/exec reports that only for a command that succeeded).
	pr, pw, err := os.Pipe()
	if err != nil {
		return outcome{exitCode: -1, spawnErr: fmt.Errorf("output pipe: %w", err), duration: time.Since(start)}
	}
	defer pr.Close()
	cmd := osexec.CommandContext(runCtx, req.argv[0], req.argv[1:]...)
	cmd.Dir = req.cwd
	cmd.Env = mergeEnv(env, req.env)
	findOnPath(cmd, req.argv[0])
	cmd.Stdout = pw
	cmd.Stderr = pw
	// killed records that the group was killed: only then did the timeout or the cancellation end
	// the command. The contexts alone cannot tell, as they may expire after the command exited on
	// its own, while a background process it left holds the pipe open.
	var killed atomic.Bool
	// The whole group: grandchildren die with the command. Started through procgroup, the
	// command also dies with nodmix on Linux, even if nodmix is killed outright.
	cmd.Cancel = func() error {
		killed.Store(true)
		return procgroup.Kill(cmd.Process.Pid)
	}
	// Should the group kill fail, os/exec kills the command itself this long after.
	cmd.WaitDelay = o.WaitDelay

	err = procgroup.Start(cmd)
	pw.Close() // the child has its own copy; ours would keep the pipe from ever ending
	if err != nil {
		// A context that is already done makes Start fail without running anything: that is the
		// timeout or the cancellation, not a command that cannot start.
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			out := outcome{exitCode: -1, duration: time.Since(start)}
			out.canceled = ctx.Err() != nil
			out.timedOut = !out.canceled
			return out
		}
		return outcome{exitCode: -1, spawnErr: spawnError(req, err), duration: time.Since(start)}
	}
	capt := newCapture(o.MaxOutputBytes)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(capt, pr) // capture never fails; a read error ends the output like EOF
	}()
	_ = cmd.Wait() // the process state below says how the command ended
	out := outcome{exitCode: -1}
	if !pipeClosed(copied, o.WaitDelay) {
		out.pipeHeld = true
		pr.Close() // ends the copy's pending read
		<-copied
	}
	out.snap = capt.result()
	out.duration = time.Since(start)
	if st := cmd.ProcessState; st != nil {
		out.exitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.signal = signalName(ws.Signal())
		}
	}
	switch {
	case !killed.Load():
	case ctx.Err() != nil:
		out.canceled = true
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		out.timedOut = true
	}
	return out
}

// findOnPath looks name up on the PATH of the command's environment, which the call's env or
// tools.exec.env may set, rather than on nodmix's own, which os/exec searched. As os/exec does,
// it searches only absolute directories (a relative one would depend on the cwd).
func findOnPath(cmd *osexec.Cmd, name string) {
	if strings.Contains(name, "/") {
		return
	}
	path, ok := "", false
	for _, kv := range cmd.Env {
		if v, found := strings.CutPrefix(kv, "PATH="); found {
			path, ok = v, true // the last one is what the process sees
		}
	}
	if !ok || path == os.Getenv("PATH") {
		return
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			cmd.Path, cmd.Err = p, nil
			return
		}
	}
	cmd.Path, cmd.Err = name, &osexec.Error{Name: name, Err: osexec.ErrNotFound}
}

// pipeClosed waits at most d for the copy of the output to reach the end of the pipe, which
// comes once every process holding it has closed it or exited.
func pipeClosed(copied <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-copied:
		return true
	case <-t.C:
		return false
	}
}

// spawnError explains why the command did not start, naming the argument at fault.
func spawnError(req *request, err error) error {
	switch {
	case errors.Is(err, osexec.ErrNotFound):
		return fmt.Errorf("command not found: %q is not in PATH", req.argv[0])
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("cannot run %q: permission denied", req.argv[0])
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("cannot run %q: no such file", req.argv[0])
	default:
		return fmt.Errorf("cannot start %q: %w", req.argv[0], err)
	}
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}
