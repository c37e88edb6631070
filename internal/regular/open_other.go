//go:build !unix

package regular

import (
	"io/fs"
	"os"
)

// openNoBlock opens name for reading. Only unix has named pipes that block an open; see
// open_unix.go.
func openNoBlock(name string) (*os.File, error) { return os.Open(name) }

// heldDescriptor: only unix names a descriptor by a path.
func heldDescriptor(string, fs.FileInfo) bool { return false }

func setBlocking(*os.File) error { return nil }
