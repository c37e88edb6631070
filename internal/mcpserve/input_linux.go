//go:build linux

package mcpserve

import (
	"io"
	"os"
	"strconv"
	"syscall"
	"time"
)

// pollableInput returns a second, non-blocking open of in when in is a pipe read with blocking
// reads, as the stdin a parent gives `nodmix mcp serve` is. Its reads wait in the runtime's
// poller instead of holding a thread in a system call, which costs the scheduler a hand-off
// and its monitor a wake-up per message, and Close ends them. The blocking mode of in itself
// is left alone: it belongs to every process that shares that open pipe, the parent's among
// them. It returns nil when in stays as it is (not a pipe, already pollable, or /proc not there).
func pollableInput(in io.Reader) *os.File {
	f, ok := in.(*os.File)
	if !ok || f.SetReadDeadline(time.Time{}) == nil {
		return nil // not a file, or one the poller already watches
	}
	fd := int(f.Fd()) // does not change the mode of a file the poller does not watch
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil
	}
	// Opening the pipe through /proc makes an open file description of its own.
	nfd, err := syscall.Open("/proc/self/fd/"+strconv.Itoa(fd), syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	pf := os.NewFile(uintptr(nfd), f.Name())
	if pf.SetReadDeadline(time.Time{}) != nil {
		_ = pf.Close()
		return nil
	}
	return pf
}

// pollableOutput returns a second, non-blocking open of out when out is a pipe, as the stdout a
// parent gives `nodmix mcp serve` is, or nil. Closing it ends a write in progress, which a
// blocking write to a client that does not read would hold for good; and a write to it that
// fails with EPIPE is an error, not the death by SIGPIPE of a write to descriptor 1 or 2 (see
// UnbrokenOutput). The mode of out itself is left alone, as in pollableInput.
func pollableOutput(out io.Writer) *os.File {
	pf := reopenFile(out, func(fd int) int {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
			return -1
		}
		nfd, err := syscall.Open("/proc/self/fd/"+strconv.Itoa(fd), syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			return -1
		}
		return nfd
	})
	if pf == nil {
		return nil
	}
	if pf.SetWriteDeadline(time.Time{}) != nil {
		_ = pf.Close()
		return nil
	}
	return pf
}
