//go:build unix

package sandbox

import "syscall"

// setProcessRlimits forbids core dumps and growing any file. Failures are ignored: these are
// defence in depth on top of a runtime that has no file API at all.
func setProcessRlimits() {
	zero := &syscall.Rlimit{}
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, zero)
	_ = syscall.Setrlimit(syscall.RLIMIT_FSIZE, zero)
}
