package exec

import (
	"bytes"
	"unicode/utf8"
)

// capture keeps the head and the tail of a byte stream within a fixed budget and counts what it
// drops in between, so that a command printing gigabytes costs no more memory than one printing
// the budget. The first half of the budget holds the head, the second half a ring of the tail.
//
// A capture is written by one goroutine (run copies the single stdout+stderr pipe from one
// goroutine) and read only after the writer is done; it has no lock of its own.
type capture struct {
	headCap int
	tailCap int

	head  []byte // grows up to headCap
	ring  []byte // allocated at tailCap on first overflow of the head
	ringN int64  // bytes ever written to ring; the write position is ringN % tailCap

	total    int64 // bytes written
	newlines int64 // '\n' written
}

func newCapture(limit int) *capture {
	if limit < 2 {
		limit = 2
	}
	h := limit / 2
	return &capture{headCap: h, tailCap: limit - h}
}

// Write never fails and never blocks on anything but memory copies.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	c.newlines += int64(bytes.Count(p, []byte{'\n'}))
	if room := c.headCap - len(c.head); room > 0 {
		k := min(room, len(p))
		if c.head == nil {
			c.head = make([]byte, 0, min(c.headCap, max(k, 4096)))
		}
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if c.ring == nil {
		c.ring = make([]byte, c.tailCap)
	}
	if len(p) >= c.tailCap {
		p = p[len(p)-c.tailCap:]
	}
	pos := int(c.ringN % int64(c.tailCap))
	k := copy(c.ring[pos:], p)
	copy(c.ring, p[k:])
	c.ringN += int64(len(p))
	return n, nil
}

// tail returns the ring's bytes in stream order.
func (c *capture) tail() []byte {
	if c.ring == nil {
		return nil
	}
	if c.ringN < int64(c.tailCap) {
		return c.ring[:c.ringN]
	}
	pos := int(c.ringN % int64(c.tailCap))
	out := make([]byte, 0, c.tailCap)
	out = append(out, c.ring[pos:]...)
	return append(out, c.ring[:pos]...)
}

// snapshot is what the capture kept: the head, the tail and what lies between them.
type snapshot struct {
	head, tail    []byte
	total         int64 // bytes the command wrote
	omittedBytes  int64 // bytes between head and tail that were dropped
	omittedLines  int64 // newlines among the dropped bytes
	lineBoundCuts bool  // the cut points were moved to line boundaries
}

// lineSnap is how far a cut point may move to land on a line boundary.
const lineSnap = 4096

// result returns what was kept. When bytes were dropped, the head is cut back to its last newline
// and the tail forward past its first one (each within lineSnap bytes), and otherwise to a UTF-8
// boundary, so the omission marker never splits a line or a character.
func (c *capture) result() snapshot {
	s := snapshot{head: c.head, tail: c.tail(), total: c.total}
	dropped := c.total - int64(len(s.head)) - int64(len(s.tail))
	if dropped <= 0 {
		// Nothing was lost: the tail continues the head exactly.
		return snapshot{head: append(append([]byte(nil), s.head...), s.tail...), total: c.total}
	}
	if i := bytes.LastIndexByte(s.head, '\n'); i >= 0 && len(s.head)-1-i <= lineSnap {
		s.head = s.head[:i+1]
		s.lineBoundCuts = true
	} else {
		s.head = trimPartialRuneEnd(s.head)
	}
	if i := bytes.IndexByte(s.tail, '\n'); i >= 0 && i < lineSnap {
		s.tail = s.tail[i+1:]
	} else {
		s.tail = trimPartialRuneStart(s.tail)
	}
	s.omittedBytes = c.total - int64(len(s.head)) - int64(len(s.tail))
	s.omittedLines = c.newlines - int64(bytes.Count(s.head, []byte{'\n'})) - int64(bytes.Count(s.tail, []byte{'\n'}))
	return s
}

// trimPartialRuneEnd drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRuneEnd(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// trimPartialRuneStart drops continuation bytes at the start of b.
func trimPartialRuneStart(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
