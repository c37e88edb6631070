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

// Own makes cmd, when started, the leader of a new process group.
func Own(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
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
