//go:build !linux

package mcpserve

import (
	"io"
	"os"
)

// pollableInput reopens a blocking pipe where /proc allows it (see input_linux.go); elsewhere
// the input stays as it is.
func pollableInput(io.Reader) *os.File { return nil }

// pollableOutput reopens a pipe where /proc allows it (see input_linux.go); elsewhere the output
// stays as it is.
func pollableOutput(io.Writer) *os.File { return nil }
