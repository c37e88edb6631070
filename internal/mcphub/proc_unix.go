//go:build unix

package mcphub

import (
	"os/exec"
	"syscall"
)

// ownGroup starts a stdio server in a process group of its own, so that ending it reaches what
// it started: `npx` and shell wrappers leave the real server as a grandchild.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills whatever is left of the group led by pid once the leader is gone. A group with
// no process left is not an error.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
