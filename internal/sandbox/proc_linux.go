package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// limitAddressSpace caps the child's address space at what it mapped before the run (base)
// plus room for twice the heap limit, so one allocation far over the limit fails inside the
// allocator (and the runtime exits with "out of memory") instead of taking the machine's memory.
// The Go runtime reserves its address space up front, which is why the cap is relative to the
// current size. Skipped under -race, whose runtime refuses to start its shadow mappings under
// such a cap.
func limitAddressSpace(base processBase, memoryBytes int64) {
	if raceEnabled || base.vmKiB == 0 {
		return
	}
	limit := base.vmKiB<<10 + 2*uint64(memoryBytes) + 256<<20
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
}

// mappedKiB is the process's mapped address space (VmSize) in KiB, 0 when unknown. Reading
// /proc/self/status takes about 0.1 ms, which is why the child does it before its run.
func mappedKiB() uint64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	vmKiB, _ := statusField(status, "VmSize:")
	return vmKiB
}

// residentBytes is the resident set size of process pid, for the parent's backstop check.
func residentBytes(pid int) (uint64, bool) {
	statm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, false
	}
	fields := bytes.Fields(statm)
	if len(fields) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(string(fields[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}

// statusField reads a "Name:   123 kB" line of /proc/<pid>/status.
func statusField(status []byte, name string) (uint64, bool) {
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		rest, found := bytes.CutPrefix(line, []byte(name))
		if !found {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.ParseUint(string(f[0]), 10, 64)
		return n, err == nil
	}
	return 0, false
}
