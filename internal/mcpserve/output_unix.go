//go:build unix

package mcpserve

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// UnbrokenOutput returns a second descriptor of out when out is the process's stdout or stderr,
// or nil; the caller closes it. The runtime kills a program whose write to descriptor 1 or 2
// fails with EPIPE (by SIGPIPE): a client that went away would take the server down at its next
// answer or log line, before it could end its calls and close its servers. Through another
// descriptor that is a write error.
func UnbrokenOutput(out io.Writer) *os.File {
	return reopenFile(out, func(fd int) int {
		if fd != 1 && fd != 2 {
			return -1
		}
		nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return -1
		}
		return nfd
	})
}

// reopenFile returns the file of the descriptor open makes of out's (-1 for none), or nil when
// out is not a file or open makes none. open sees the descriptor through Control, not Fd: Fd
// would put a non-blocking descriptor, shared with the parent, in blocking mode.
func reopenFile(out io.Writer, open func(fd int) int) *os.File {
	f, ok := out.(*os.File)
	if !ok {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nfd := -1
	_ = rc.Control(func(fd uintptr) { nfd = open(int(fd)) })
	if nfd < 0 {
		return nil
	}
	return os.NewFile(uintptr(nfd), f.Name())
}
