//go:build unix

package config

import (
	"os"
	"syscall"
)

// openNoBlock opens name for reading without waiting for anything: opening a named pipe blocks
// until a writer opens it too, which no signal short of SIGKILL ends, so the open is made
// non-blocking and the caller refuses the pipe by the opened file's Stat. O_NONBLOCK changes
// nothing for reading a regular file.
func openNoBlock(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
