//go:build !unix

package mcpserve

import (
	"io"
	"os"
)

// UnbrokenOutput is for systems with SIGPIPE (see output_unix.go); elsewhere out stays as it is.
func UnbrokenOutput(io.Writer) *os.File { return nil }
