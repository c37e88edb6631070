//go:build unix

package mcpserve

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// unbrokenOutput returns a second descriptor of out when out is the process's stdout or stderr,
// or nil. The runtime kills a program whose write to descriptor 1 or 2 fails with EPIPE (by
// SIGPIPE): a client that went away would take the server down at its next answer, before it
// could end its calls and close its servers. Through another descriptor that is a write error.
func unbrokenOutput(out io.Writer) *os.File {
	f, ok := out.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nfd := -1
	// Control, not Fd: Fd would put a non-blocking descriptor, shared with the parent, in
	// blocking mode.
	_ = rc.Control(func(fd uintptr) {
		if fd == 1 || fd == 2 {
			nfd, _ = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
		}
	})
	if nfd < 0 {
		return nil
	}
	return os.NewFile(uintptr(nfd), f.Name())
}
