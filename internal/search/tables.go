package search

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// shortWords maps ASCII raw words of up to 15 bytes, packed into two words with the
// length in the top byte (as the BM25+ corpus packs its tokens), to their ids. A probe
// compares the packed key in the slot, so a known word costs one slot read and no read
// of the text the word was first seen in; slots hold no pointers, which spares the
// garbage collector a scan of the table. Once built it is only read.
//
// Words come from catalog text a server chose, so the home slot is multiply-add-shift
// hashing with multipliers drawn at random per table (hashSeeds): keys crafted to share a
// slot under a fixed function would make every probe walk one long run.
type shortWords struct {
	slots []shortWordSlot
	n     int
	mul   [2]uint64 // odd, random; zero until init
	shift uint8     // 64 − log2(len(slots))
}

type shortWordSlot struct {
	key [2]uint64 // never zero for a stored word: the length byte is at least one
	id  int32
}

// packWord packs an ASCII word of 1 to 15 bytes; ok is false for any other.
func packWord(raw string) (key [2]uint64, ok bool) {
	if len(raw) == 0 || len(raw) > 15 {
		return key, false
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c >= 0x80 {
			return key, false
		}
		key[i>>3] |= uint64(c) << (8 * (i & 7))
	}
	key[1] |= uint64(len(raw)) << 56
	return key, true
}

func (t *shortWords) init(hint int) {
	size := 1024
	for size < 2*hint {
		size <<= 1
	}
	t.slots = make([]shortWordSlot, size)
	t.n = 0
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	if t.mul[0] == 0 {
		t.mul = hashSeeds()
	}
}

func (t *shortWords) clone() shortWords {
	c := *t
	c.slots = append([]shortWordSlot(nil), t.slots...)
	return c
}

func (t *shortWords) home(key [2]uint64) uint64 {
	return mixHash(key[0]*t.mul[0]+key[1]*t.mul[1]) >> (t.shift & 63)
}

// find returns the id of the word packed in key, or -1.
func (t *shortWords) find(key [2]uint64) int32 { return t.find2(key[0], key[1]) }

// find2 is find of the key {k0, k1}, which the build's word loop keeps in registers.
func (t *shortWords) find2(k0, k1 uint64) int32 {
	if t.slots == nil {
		return -1
	}
	mask := uint64(len(t.slots) - 1)
	for i := mixHash(k0*t.mul[0]+k1*t.mul[1]) >> (t.shift & 63); ; i = (i + 1) & mask { // home's
		s := &t.slots[i]
		if s.key[0] == k0 && s.key[1] == k1 {
			return s.id
		}
		if s.key[1] == 0 { // no stored key is zero there: its length byte is at least one
			return -1
		}
	}
}

// insert adds a word that find did not find.
func (t *shortWords) insert(key [2]uint64, id int32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.init(len(old))
		for _, s := range old {
			if s.key != ([2]uint64{}) {
				t.place(s)
			}
		}
	}
	t.place(shortWordSlot{key: key, id: id})
}

func (t *shortWords) place(s shortWordSlot) {
	mask := uint64(len(t.slots) - 1)
	i := t.home(s.key)
	for t.slots[i].key != ([2]uint64{}) {
		i = (i + 1) & mask
	}
	t.slots[i] = s
	t.n++
}

// wordTable maps raw words to their ids in an analyzer's word list. It is an
// open-addressing table of ids, each with 32 bits of its word's hash, which pick its home
// slot and spare most string comparisons; copying it for an update is one slice copy
// where a map would rehash every word. Once built it is only read, and safe to share.
type wordTable struct {
	seed  maphash.Seed
	slots []wordSlot
	n     int
}

type wordSlot struct {
	hash uint32
	info *wordInfo // nil marks a free slot
}

func (t *wordTable) init(hint int) {
	t.seed = maphash.MakeSeed()
	t.alloc(hint)
}

func (t *wordTable) alloc(hint int) {
	size := 1024
	for size < 2*hint {
		size <<= 1
	}
	t.slots = make([]wordSlot, size)
	t.n = 0
}

// clone returns a copy that can grow without changing t.
func (t *wordTable) clone() wordTable {
	c := *t
	c.slots = append([]wordSlot(nil), t.slots...)
	return c
}

func (t *wordTable) hash(raw string) uint32 {
	if t.slots == nil {
		return 0
	}
	return uint32(maphash.String(t.seed, raw))
}

// find returns the analysis of raw, whose hash is h, or nil.
func (t *wordTable) find(h uint32, raw string) *wordInfo {
	if t.slots == nil {
		return nil
	}
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s.info == nil {
			return nil
		}
		if s.hash == h && s.info.raw == raw {
			return s.info
		}
	}
}

// insert adds a word that find did not find.
func (t *wordTable) insert(h uint32, info *wordInfo) {
	if 2*(t.n+1) > len(t.slots) { // at most half full: probes stay short
		old := t.slots
		t.alloc(len(old))
		for _, s := range old {
			if s.info != nil {
				t.place(s)
			}
		}
	}
	t.place(wordSlot{hash: h, info: info})
}

func (t *wordTable) place(s wordSlot) {
	mask := uint32(len(t.slots) - 1)
	i := s.hash & mask
	for t.slots[i].info != nil {
		i = (i + 1) & mask
	}
	t.slots[i] = s
	t.n++
}

// pairTable maps a pair of word ids to the term id of the two words joined: a pair met
// again costs one probe, not a concatenation, a stemming and a term lookup. Slots are
// three ids, and the table is kept at most three quarters full: with some forty
// thousand pairs in a large catalog, a small table misses the cache less than short
// probes save. Which words are adjacent is the catalog's choice, so the home slot is
// multiply-shift hashing with a multiplier drawn at random per table, as in shortWords.
type pairTable struct {
	slots []pairSlot
	n     int
	mul   uint64 // odd, random; zero until init
	shift uint8  // 64 − log2(len(slots))
}

type pairSlot struct {
	a, b int32
	id   int32 // the term id plus one; zero marks a free slot
}

func (t *pairTable) init(hint int) {
	size := 1024
	for 3*size < 4*hint {
		size <<= 1
	}
	t.slots = make([]pairSlot, size)
	t.n = 0
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	if t.mul == 0 {
		t.mul = hashSeeds()[0]
	}
}

func (t *pairTable) home(a, b int32) uint64 {
	return mixHash((uint64(uint32(a))<<32|uint64(uint32(b)))*t.mul) >> (t.shift & 63)
}

// mixHash finishes a multiply-shift hash before its top bits pick a slot. Keys in arithmetic
// progression (which crafted keys can be, whatever the multipliers) hash to a progression of
// their own, and for some multipliers its top bits fall into a few clusters, runs thousands of
// slots long under linear probing; folding the low half into the high half and multiplying once
// more spreads them as random keys spread.
func mixHash(h uint64) uint64 {
	h ^= h >> 32
	return h * 0x9e3779b97f4a7c15
}

// hashSeeds draws two odd multipliers for multiply-shift hashing. Their randomness is what
// bounds the chance that two given keys share a slot, whoever chose the keys.
func hashSeeds() [2]uint64 {
	return [2]uint64{rand.Uint64() | 1, rand.Uint64() | 1}
}

func (t *pairTable) get(a, b int32) (int32, bool) {
	mask := uint64(len(t.slots) - 1)
	for i := t.home(a, b); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.id == 0 {
			return 0, false
		}
		if s.a == a && s.b == b {
			return s.id - 1, true
		}
	}
}

// put adds a pair that get did not find.
func (t *pairTable) put(a, b, id int32) {
	if 4*(t.n+1) > 3*len(t.slots) {
		old := t.slots
		t.init(len(old))
		for _, s := range old {
			if s.id != 0 {
				t.place(s)
			}
		}
	}
	t.place(pairSlot{a: a, b: b, id: id + 1})
}

func (t *pairTable) place(s pairSlot) {
	mask := uint64(len(t.slots) - 1)
	i := t.home(s.a, s.b)
	for t.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
	t.n++
}

// termTable interns the terms of a Tool Search ranker: term → dense id, and back. It is
// an open-addressing table like wordTable's; an update continues a copy of it, which is
// two slice copies where a map would be rehashed term by term. Once built it is only
// read, and safe to share.
type termTable struct {
	seed  maphash.Seed
	slots []termSlot
	strs  []string // id → term
}

type termSlot struct {
	hash uint32
	id   int32 // the term's id plus one; zero marks a free slot
}

func newTermTable(hint int) termTable {
	t := termTable{seed: maphash.MakeSeed()}
	t.alloc(hint)
	t.strs = make([]string, 0, hint+hint/4) // a term table is seldom much fuller than its hint
	return t
}

func (t *termTable) alloc(hint int) {
	size := 1024
	for 3*size < 4*hint {
		size <<= 1
	}
	t.slots = make([]termSlot, size)
}

// clone returns a copy that can grow without changing t.
func (t *termTable) clone() termTable {
	return termTable{seed: t.seed, slots: append([]termSlot(nil), t.slots...), strs: slices.Clip(t.strs)}
}

// len is the number of terms.
func (t *termTable) len() int { return len(t.strs) }

// find returns the id of term.
func (t *termTable) find(term string) (int32, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	h := uint32(maphash.String(t.seed, term))
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s.id == 0 {
			return 0, false
		}
		if s.hash == h && t.strs[s.id-1] == term {
			return s.id - 1, true
		}
	}
}

// intern returns the id of term, adding it when it is new; added reports that.
func (t *termTable) intern(term string) (id int32, added bool) {
	return t.internHash(term, uint32(maphash.String(t.seed, term)))
}

// internHash is intern of a term whose hash under the table's seed is h.
func (t *termTable) internHash(term string, h uint32) (id int32, added bool) {
	mask := uint32(len(t.slots) - 1)
	i := h & mask
	for ; t.slots[i].id != 0; i = (i + 1) & mask {
		if s := t.slots[i]; s.hash == h && t.strs[s.id-1] == term {
			return s.id - 1, false
		}
	}
	id = int32(len(t.strs))
	t.strs = append(t.strs, term)
	t.slots[i] = termSlot{hash: h, id: id + 1}
	if 4*len(t.strs) > 3*len(t.slots) { // at most three quarters full, as pairTable
		old := t.slots
		t.alloc(len(old))
		mask = uint32(len(t.slots) - 1)
		for _, s := range old {
			if s.id != 0 {
				j := s.hash & mask
				for t.slots[j].id != 0 {
					j = (j + 1) & mask
				}
				t.slots[j] = s
			}
		}
	}
	return id, true
}
