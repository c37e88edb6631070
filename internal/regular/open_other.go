//go:build !unix

package regular

import "os"

// openNoBlock opens name for reading. Only unix has named pipes that block an open; see
// open_unix.go.
func openNoBlock(name string) (*os.File, error) { return os.Open(name) }
