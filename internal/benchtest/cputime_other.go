//go:build !unix

package benchtest

import "time"

// CPUTime is 0 where getrusage is not to be had (Windows): the benchmarks' cpu-ns/op read 0
// there, and their wall time is the figure.
func CPUTime() time.Duration { return 0 }
