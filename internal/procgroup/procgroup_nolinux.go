//go:build unix && !linux

package procgroup

import (
	"os/exec"
	"syscall"
)

// setDeathSignal does nothing: only Linux can signal a child when its parent dies, so elsewhere a
// group outlives a nodmix that is killed outright (a normal exit still kills it).
func setDeathSignal(*syscall.SysProcAttr) {}

func startLocked(cmd *exec.Cmd) error { return cmd.Start() }
