//go:build !linux

package sandbox

// limitAddressSpace is Linux-only; elsewhere the heap watchdog and the parent's deadline bound
// a run's memory.
func limitAddressSpace(processBase, int64) {}

// mappedKiB is only needed for limitAddressSpace.
func mappedKiB() uint64 { return 0 }

// residentBytes is unknown off Linux; the parent then skips its resident-size backstop.
func residentBytes(int) (uint64, bool) { return 0, false }
