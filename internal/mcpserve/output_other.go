//go:build !unix

package mcpserve

import (
	"io"
	"os"
)

// unbrokenOutput is for systems with SIGPIPE (see output_unix.go); elsewhere out stays as it is.
func unbrokenOutput(io.Writer) *os.File { return nil }
