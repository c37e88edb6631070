//go:build unix

package regular

import (
	"os"
	"syscall"
)

// openNoBlock opens name for reading without waiting for a named pipe's writer; O_NONBLOCK
// changes nothing for reading a regular file.
func openNoBlock(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
