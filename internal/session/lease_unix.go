//go:build unix && !linux

package session

import (
	"errors"
	"os"
	"syscall"
)

// hostID is the host name: without /proc a pid is all a process is known by.
func hostID() string {
	name, _ := os.Hostname()
	return name
}

// processStart is not known here.
func processStart(int) string { return "" }

// processGone reports whether no process has the pid: a pid given to another process keeps the
// lease until it expires.
func processGone(pid int, _ string) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
