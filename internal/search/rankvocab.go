package search

import (
	"cmp"
	"hash/maphash"
	"slices"
	"strings"
)

// vocabSet is the set of words and parts a frozen ranker's corpus uses, which query words
// are checked against. It is an open-addressing table of the strings with 32 bits of their
// hash: a build adds tens of thousands of parts, most of them repeats, and a probe that
// finds one costs less than a map assignment. Once built it is only read, and safe to
// share.
type vocabSet struct {
	seed  maphash.Seed
	slots []vocabSlot
	n     int
}

type vocabSlot struct {
	hash uint32
	used bool
	word string
}

func newVocabSet(hint int) vocabSet {
	s := vocabSet{seed: maphash.MakeSeed()}
	s.alloc(hint)
	return s
}

func (s *vocabSet) alloc(hint int) {
	size := 1024
	for 3*size < 4*hint { // at most three quarters full
		size <<= 1
	}
	s.slots = make([]vocabSlot, size)
	s.n = 0
}

// has reports whether w is in the set.
func (s *vocabSet) has(w string) bool {
	if len(s.slots) == 0 {
		return false
	}
	h := uint32(maphash.String(s.seed, w))
	mask := uint32(len(s.slots) - 1)
	for i := h & mask; s.slots[i].used; i = (i + 1) & mask {
		if s.slots[i].hash == h && s.slots[i].word == w {
			return true
		}
	}
	return false
}

// add adds w.
func (s *vocabSet) add(w string) {
	h := uint32(maphash.String(s.seed, w))
	mask := uint32(len(s.slots) - 1)
	i := h & mask
	for ; s.slots[i].used; i = (i + 1) & mask {
		if s.slots[i].hash == h && s.slots[i].word == w {
			return
		}
	}
	s.slots[i] = vocabSlot{hash: h, used: true, word: w}
	s.n++
	if 4*s.n > 3*len(s.slots) {
		old := s.slots
		s.alloc(len(old))
		mask = uint32(len(s.slots) - 1)
		for _, o := range old {
			if o.used {
				j := o.hash & mask
				for s.slots[j].used {
					j = (j + 1) & mask
				}
				s.slots[j] = o
				s.n++
			}
		}
	}
}

// sorted returns the words of the set in byte order. They are sorted by their first eight
// bytes, held next to them, and then by their bytes: most comparisons read no string.
func (s *vocabSet) sorted() []string {
	type keyed struct {
		prefix uint64 // the first eight bytes, big-endian, zeros past the end
		word   string
	}
	ks := make([]keyed, 0, s.n)
	for _, slot := range s.slots {
		if slot.used {
			var p uint64
			for i := range 8 {
				p <<= 8
				if i < len(slot.word) {
					p |= uint64(slot.word[i])
				}
			}
			ks = append(ks, keyed{p, slot.word})
		}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if a.prefix != b.prefix {
			return cmp.Compare(a.prefix, b.prefix)
		}
		return strings.Compare(a.word, b.word)
	})
	out := make([]string, len(ks))
	for i := range ks {
		out[i] = ks[i].word
	}
	return out
}
