package session

import (
	"os"
	"testing"
)

// TestNewHolderOfThisProcess: a claim of this process carries its start, read once: every turn
// claims its session, and the claim must not read /proc each time (it cost ten allocations and
// a file open). The holder is not gone while the process runs.
func TestNewHolderOfThisProcess(t *testing.T) {
	h := NewHolder(os.Getpid())
	if want := processStart(os.Getpid()); h.Start != want {
		t.Errorf("start = %q, want %q", h.Start, want)
	}
	if h.Gone() {
		t.Error("this process's holder is gone")
	}
	// The token is one allocation (two under the race detector); reading /proc was ten more.
	if n := testing.AllocsPerRun(100, func() { NewHolder(os.Getpid()) }); n > 3 {
		t.Errorf("NewHolder of this process: %v allocations, want at most 3", n)
	}
}
