package tokenjuice

import (
	"bytes"
	"fmt"
	"math"
)

// Runners often print a failure twice (as it happens and again in a closing summary), and logs
// repeat whole blocks; the second copy tells nothing new. repeatStage replaces a run of lines that
// repeats, line for line, a run seen shortly before by one line saying so. It remembers the hashes
// of the last repeatHistory lines and holds the lines of a run while it matches; it allocates
// nothing once its buffers have grown to the longest run.

const (
	repeatHistory  = 4096
	repeatMinLines = 3
	repeatMinChars = 80
)

// lineHash is FNV-1a: a fixed function, so that which repeats are found (the table forgets lines
// whose slot a later line takes) does not vary from one run to the next.
func lineHash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	// Mix the high bits into the low ones, which pick the table slot.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

type repeatStage struct {
	next stage
	n    int      // lines read
	hist []uint64 // a ring of the last hashes; it grows to repeatHistory with the output
	// lastH and lastN map a hash to its latest line number, in a table indexed by the hash: a
	// newer line evicts an older one of the same slot, which only lets a repeat go unseen.
	lastH []uint64
	lastN []int32

	// the run being matched: it repeats the lines from line from on
	from         int
	pending      [][2]int // its lines, as spans of arena
	arena        []byte
	pendingOff   int
	pendingChars int
	scratch      []byte
}

func (r *repeatStage) line(l []byte, off int) {
	// Indentation is not compared: a closing summary often repeats a failure indented anew.
	if r.n >= math.MaxInt32 { // line numbers are kept in 32 bits
		r.flush()
		r.next.line(l, off)
		return
	}
	h := lineHash(bytes.TrimLeft(l, " \t"))
	if r.hist == nil || r.n >= len(r.hist) && len(r.hist) < repeatHistory && len(r.pending) == 0 {
		r.grow()
	}
	if len(r.pending) > 0 {
		k := r.from + len(r.pending)
		if k < r.n && r.n-k < r.window() && r.hist[k%len(r.hist)] == h {
			r.hold(l, off)
			r.remember(h)
			return
		}
		r.flush()
	}
	if i := r.slot(h); r.lastH[i] == h && int(r.lastN[i]) < r.n && r.n-int(r.lastN[i]) < r.window() && len(l) > 0 {
		r.from = int(r.lastN[i])
		r.hold(l, off)
		r.remember(h)
		return
	}
	r.remember(h)
	r.next.line(l, off)
}

func (r *repeatStage) slot(h uint64) int { return int(h % uint64(len(r.lastH))) }

// grow sizes the tables for the lines read so far: small outputs, the most common, stay cheap.
func (r *repeatStage) grow() {
	size := 64
	if r.hist != nil {
		size = min(repeatHistory, 8*len(r.hist))
	}
	hist := r.hist
	r.hist, r.lastH, r.lastN = make([]uint64, size), make([]uint64, size), make([]int32, size)
	for n := max(0, r.n-len(hist)); n < r.n; n++ {
		h := hist[n%len(hist)]
		r.hist[n%size] = h
		i := r.slot(h)
		r.lastH[i], r.lastN[i] = h, int32(n)
	}
}

// window is how far back a repeat may start.
func (r *repeatStage) window() int { return len(r.hist) }

func (r *repeatStage) hold(l []byte, off int) {
	if len(r.pending) == 0 {
		r.pendingOff, r.pendingChars = off, 0
	}
	r.pending = append(r.pending, [2]int{len(r.arena), len(r.arena) + len(l)})
	r.arena = append(r.arena, l...)
	r.pendingChars += len(l)
}

func (r *repeatStage) remember(h uint64) {
	r.hist[r.n%len(r.hist)] = h
	i := r.slot(h)
	r.lastH[i], r.lastN[i] = h, int32(r.n)
	r.n++
}

// flush ends the run being matched: a long enough one becomes a note, a short one passes on.
func (r *repeatStage) flush() {
	if len(r.pending) >= repeatMinLines && r.pendingChars >= repeatMinChars {
		r.scratch = fmt.Appendf(r.scratch[:0], "… %d lines repeated from above …", len(r.pending))
		r.next.line(r.scratch, r.pendingOff)
	} else {
		for _, p := range r.pending {
			r.next.line(r.arena[p[0]:p[1]], r.pendingOff)
		}
	}
	r.pending, r.arena = r.pending[:0], r.arena[:0]
}

func (r *repeatStage) end() {
	r.flush()
	r.next.end()
}
