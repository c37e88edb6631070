package search

import (
	"hash/maphash"
	"iter"
	"strings"
)

// RefTable maps keys to references, small integers its user resolves to the keys they
// stand for (a document and which of its names, say), in the order they were added. It
// stores hashes and references only: a lookup yields every reference added under the
// key's hash, and its user compares the key each one stands for. An index of ten thousand
// tools adds tens of thousands of names, each a string-keyed map entry otherwise; the
// slots hold no pointers for the collector to scan. Once built it is only read, and safe
// for concurrent use.
type RefTable struct {
	seed  maphash.Seed
	slots []refSlot
	n     int
}

type refSlot struct {
	hash uint32
	ref  uint32 // the reference plus one; zero marks a free slot
}

// NewRefTable returns a table sized for hint references.
func NewRefTable(hint int) RefTable {
	t := RefTable{seed: maphash.MakeSeed()}
	t.alloc(hint)
	return t
}

func (t *RefTable) alloc(hint int) {
	size := 64
	for size < 2*hint {
		size <<= 1
	}
	t.slots = make([]refSlot, size)
	t.n = 0
}

// Hash is the hash of key that Add and Refs take.
func (t *RefTable) Hash(key string) uint32 { return uint32(maphash.String(t.seed, key)) }

// HashLower is Hash(strings.ToLower(key)), without a copy of an ASCII key.
func (t *RefTable) HashLower(key string) uint32 {
	if !isASCII(key) {
		return t.Hash(strings.ToLower(key))
	}
	var h maphash.Hash
	h.SetSeed(t.seed)
	var buf [64]byte
	for len(key) > 0 {
		n := copy(buf[:], key)
		for i, c := range buf[:n] {
			if 'A' <= c && c <= 'Z' {
				buf[i] = c + 'a' - 'A'
			}
		}
		h.Write(buf[:n])
		key = key[n:]
	}
	return uint32(h.Sum64())
}

// Add adds ref under the key whose hash is hash.
func (t *RefTable) Add(hash, ref uint32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.alloc(len(old))
		// From a free slot round the table, every run of probes is read from its start:
		// references of one hash keep their order.
		free := 0
		for old[free].ref != 0 {
			free++
		}
		for k := range old {
			if s := old[(free+k)%len(old)]; s.ref != 0 {
				t.place(s)
			}
		}
	}
	t.place(refSlot{hash: hash, ref: ref + 1})
}

func (t *RefTable) place(s refSlot) {
	mask := uint32(len(t.slots) - 1)
	i := s.hash & mask
	for t.slots[i].ref != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
	t.n++
}

// Refs yields the references added under hash, in the order they were added.
func (t *RefTable) Refs(hash uint32) iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		if len(t.slots) == 0 {
			return
		}
		mask := uint32(len(t.slots) - 1)
		for i := hash & mask; t.slots[i].ref != 0; i = (i + 1) & mask {
			if s := t.slots[i]; s.hash == hash && !yield(s.ref-1) {
				return
			}
		}
	}
}

// EqualLower reports whether strings.ToLower(s) == lower, without a copy of an ASCII s.
func EqualLower(s, lower string) bool {
	if !isASCII(s) {
		return strings.ToLower(s) == lower
	}
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
