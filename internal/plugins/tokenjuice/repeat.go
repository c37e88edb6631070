package tokenjuice

import (
	"fmt"
	"hash/maphash"
)

// Runners often print a failure twice (as it happens and again in a closing summary), and logs
// repeat whole blocks; the second copy tells nothing new. repeatStage replaces a run of lines that
// repeats, line for line, a run seen shortly before by one line saying so. It remembers the hashes
// of the last repeatHistory lines and holds the lines of a run while it matches.

const (
	repeatHistory  = 4096
	repeatMinLines = 3
	repeatMinChars = 80
)

var repeatSeed = maphash.MakeSeed()

type repeatStage struct {
	next stage
	n    int // lines read
	hist [repeatHistory]uint64
	last map[uint64]int // a hash's latest line number
	// the run being matched: it repeats the lines from line from on
	from         int
	pending      [][]byte
	pendingOff   int
	pendingChars int
	scratch      []byte
}

func (r *repeatStage) line(l []byte, off int) {
	if r.last == nil {
		r.last = make(map[uint64]int)
	}
	h := maphash.Bytes(repeatSeed, l)
	if len(r.pending) > 0 {
		k := r.from + len(r.pending)
		if k < r.n && r.n-k < repeatHistory && r.hist[k%repeatHistory] == h {
			r.hold(l, off)
			r.remember(h)
			return
		}
		r.flush()
	}
	if i, ok := r.last[h]; ok && len(l) > 0 && r.n-i < repeatHistory {
		r.from = i
		r.hold(l, off)
		r.remember(h)
		return
	}
	r.remember(h)
	r.next.line(l, off)
}

func (r *repeatStage) hold(l []byte, off int) {
	if len(r.pending) == 0 {
		r.pendingOff, r.pendingChars = off, 0
	}
	r.pending = append(r.pending, append([]byte(nil), l...))
	r.pendingChars += len(l)
}

func (r *repeatStage) remember(h uint64) {
	r.hist[r.n%repeatHistory] = h
	r.last[h] = r.n
	r.n++
	if len(r.last) > 4*repeatHistory { // forget lines that fell out of the history
		for k, i := range r.last {
			if r.n-i >= repeatHistory {
				delete(r.last, k)
			}
		}
	}
}

// flush ends the run being matched: a long enough one becomes a note, a short one passes on.
func (r *repeatStage) flush() {
	if len(r.pending) >= repeatMinLines && r.pendingChars >= repeatMinChars {
		r.scratch = fmt.Appendf(r.scratch[:0], "… %d lines repeated from above …", len(r.pending))
		r.next.line(r.scratch, r.pendingOff)
	} else {
		for _, p := range r.pending {
			r.next.line(p, r.pendingOff)
		}
	}
	r.pending = r.pending[:0]
}

func (r *repeatStage) end() {
	r.flush()
	r.next.end()
}
