//go:build unix

package sandbox

import (
	"os"
	"strconv"
	"syscall"
)

// signalName spells a signal the way the reference (Node's child.signalCode) reports it.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGXFSZ:
		return "SIGXFSZ"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGILL:
		return "SIGILL"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	default:
		return "signal " + strconv.Itoa(int(sig))
	}
}

// exitDescription is "<signal|code>" of a finished process.
func exitDescription(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return signalName(ws.Signal())
	}
	return strconv.Itoa(ps.ExitCode())
}
