//go:build !unix

package sandbox

import (
	"os"
	"strconv"
)

// exitDescription is "<code>" of a finished process.
func exitDescription(ps *os.ProcessState) string {
	return strconv.Itoa(ps.ExitCode())
}
