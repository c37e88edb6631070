//go:build unix

// Package procgroup runs a child process in a process group of its own and kills the group, so
// that ending a command, a hook or an MCP server also ends whatever it started.
package procgroup

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
)

// Own makes cmd, when started, the leader of a new process group. On Linux the leader also gets
// SIGKILL when nodmix dies, even by SIGKILL, so a command or server does not live on as an
// orphan (what it started itself is not reached then; on a normal exit Kill ends the group).
//
// The kernel sends that signal when the thread that started the child exits, not the process.
// Go ends a thread only when a goroutine locked to it (runtime.LockOSThread) exits without
// unlocking, which nodmix never does; Start rules it out entirely and is the way to start a
// child when the caller can. Own alone is for commands started by code nodmix does not control.
func Own(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

// Start starts cmd as the leader of a process group of its own (see Own). The caller still owns
// the process: it must Wait for it (or Kill the group and then Wait).
func Start(cmd *exec.Cmd) error {
	Own(cmd)
	return startLocked(cmd)
}

// Kill kills every process of the group that pid leads. A group with no process left is not an
// error: the leader may have been reaped, and its children may have ended with it.
func Kill(pid int) error {
	if pid <= 0 {
		return nil
	}
	// A negative pid names the process group.
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill process group %d: %w", pid, err)
	}
	return nil
}
