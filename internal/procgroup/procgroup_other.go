//go:build !unix

// Package procgroup runs a child process in a process group of its own and kills the group, so
// that ending a command, a hook or an MCP server also ends whatever it started.
package procgroup

import (
	"errors"
	"os"
	"os/exec"
)

// Own does nothing here: without Unix process groups only the process itself can be ended.
func Own(*exec.Cmd) {}

// Start starts cmd; the caller owns the process and must Wait for it.
func Start(cmd *exec.Cmd) error { return cmd.Start() }

// Kill kills the process pid (its children are out of reach here).
func Kill(pid int) error {
	if pid <= 0 {
		return nil
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}
