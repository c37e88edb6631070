//go:build unix

package regular

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// openNoBlock opens name for reading without waiting for a named pipe's writer; O_NONBLOCK
// changes nothing for reading a regular file.
func openNoBlock(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// heldDescriptor reports whether path is /dev/fd/N or /proc/self/fd/N, N a descriptor of the
// process, and fi (opened from path) is that descriptor's file.
func heldDescriptor(path string, fi fs.FileInfo) bool {
	clean := filepath.Clean(path)
	num, ok := strings.CutPrefix(clean, "/dev/fd/")
	if !ok {
		num, ok = strings.CutPrefix(clean, "/proc/self/fd/")
	}
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	var held syscall.Stat_t
	if !ok || syscall.Fstat(n, &held) != nil {
		return false
	}
	return held.Dev == st.Dev && held.Ino == st.Ino
}

// setBlocking undoes openNoBlock's O_NONBLOCK for reading f: where the runtime cannot poll a
// pipe (kqueue and FIFOs on macOS) a read would otherwise fail with EAGAIN while the writer is
// still writing.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
