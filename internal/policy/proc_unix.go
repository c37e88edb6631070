//go:build unix

package policy

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the hook in a process group of its own, so that killing the group reaches
// every process the hook started.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	// The group id is the leader's pid; a negative pid signals the whole group.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}
