//go:build linux

package main

import "golang.org/x/sys/unix"

// harden makes the process non-dumpable. Its /proc entries (environ, mem, fd) then belong to
// root, so the commands nodmix runs for a model (exec, bash, hooks, stdio servers), which run as
// the same user, cannot read the keys it keeps out of their environment from
// /proc/<nodmix>/environ. It also turns off core dumps, which would hold the same keys. The
// process itself keeps access to its own entries (/proc/self/fd).
func harden() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
