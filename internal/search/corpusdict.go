package search

import (
	"maps"
	"math/bits"
	"slices"
)

// termDict is a corpus dictionary: term → id, ids dense from zero in order of addition.
// Nearly every term is at most maxPacked bytes and is kept only as its packed key, so that
// a build allocates no string per term and a lookup compares two words. The table holds
// ids, four bytes a slot, and the keys sit apart in id order: a probe touches a small
// table and a dense key array, and both stay in the cache for the words a catalog
// repeats most.
type termDict struct {
	slots []uint32    // id+1 of the short term hashed there, 0 when free; a power of two long
	shift uint8       // 64 − log2(len(slots)): the hash's top bits pick the slot
	keys  []packedKey // by id; a long term's is {its index in longs, 0}, whose length byte is 0
	long  map[string]int32
	longs []string // terms longer than maxPacked, in order of addition
	// The multipliers of the hash, odd and drawn at random per dictionary (hashSeeds): the
	// terms are a catalog's text, which must not be able to choose keys that all share a
	// slot, as it could under a fixed function.
	mul [2]uint64
}

// packedKey is a term of 1 to maxPacked bytes: its bytes in little-endian order over the
// two words, its length in the top byte of hi. A struct rather than an array, so that
// it travels in registers.
type packedKey struct {
	lo, hi uint64
}

// maxPacked is the longest term a packed key holds, in bytes.
const maxPacked = 15

// minDictSlots is the smallest table: 4 KiB, enough for a few hundred terms.
const minDictSlots = 1024

func newTermDict(hint int) *termDict {
	d := &termDict{keys: make([]packedKey, 0, hint), mul: hashSeeds()}
	d.resize(max(minDictSlots, 2*hint))
	return d
}

func isLong(key packedKey) bool { return key.hi>>56&0xf == 0 } // the length byte, without the builder's weight

// resize makes the table the power of two at or above size and reinserts every key.
func (d *termDict) resize(size int) {
	size = 1 << bits.Len(uint(size-1))
	d.slots = make([]uint32, size)
	d.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	mask := uint64(size - 1)
	for id, key := range d.keys {
		if isLong(key) {
			continue // found through d.long
		}
		i := d.slot(key)
		for d.slots[i] != 0 {
			i = (i + 1) & mask
		}
		d.slots[i] = uint32(id) + 1
	}
}

// slot is the key's first slot: multiply-add-shift hashing of both words, mixed.
func (d *termDict) slot(key packedKey) uint64 {
	return dictHash(key, d.mul) >> (d.shift & 63)
}

func dictHash(key packedKey, mul [2]uint64) uint64 {
	return mixHash(key.lo*mul[0] + key.hi*mul[1])
}

// Len is the number of terms.
func (d *termDict) Len() int { return len(d.keys) }

// find returns the id of a packed key.
func (d *termDict) find(key packedKey) (int32, bool) {
	mask := uint64(len(d.slots) - 1)
	for i := d.slot(key); ; i = (i + 1) & mask {
		v := d.slots[i]
		if v == 0 {
			return 0, false
		}
		if d.keys[v-1] == key {
			return int32(v - 1), true
		}
	}
}

// id returns the id of a packed key, adding the key if it is new.
func (d *termDict) id(key packedKey) int32 {
	id, _ := d.idSlot(key)
	return id
}

// idSlot is id that also returns the slot the key sits in afterwards.
func (d *termDict) idSlot(key packedKey) (int32, uint64) {
	mask := uint64(len(d.slots) - 1)
	i := d.slot(key)
	for {
		v := d.slots[i]
		if v == 0 {
			break
		}
		if d.keys[v-1] == key {
			return int32(v - 1), i
		}
		i = (i + 1) & mask
	}
	id := int32(len(d.keys))
	d.keys = append(d.keys, key)
	if 2*len(d.keys) > len(d.slots) { // at most half full: probes stay short
		d.resize(2 * len(d.slots))
		return id, d.slotOf(key)
	}
	d.slots[i] = uint32(id) + 1
	return id, i
}

// slotOf returns the slot of a packed key that d holds.
func (d *termDict) slotOf(key packedKey) uint64 {
	mask := uint64(len(d.slots) - 1)
	i := d.slot(key)
	for d.keys[d.slots[i]-1] != key {
		i = (i + 1) & mask
	}
	return i
}

// longID returns the id of a term longer than maxPacked, adding it if it is new.
func (d *termDict) longID(term []byte) int32 {
	if id, ok := d.long[string(term)]; ok {
		return id
	}
	return d.addLong(string(term))
}

// addLong adds term, longer than maxPacked and absent.
func (d *termDict) addLong(term string) int32 {
	if d.long == nil {
		d.long = map[string]int32{}
	}
	key := packedKey{lo: uint64(len(d.longs))}
	d.longs = append(d.longs, term)
	id := int32(len(d.keys))
	d.long[term] = id
	d.keys = append(d.keys, key) // not in the table: long terms are found through d.long
	return id
}

// lookup returns the id of a lowercased term.
func (d *termDict) lookup(term []byte) (int32, bool) {
	if len(term) > maxPacked {
		id, ok := d.long[string(term)]
		return id, ok
	}
	if len(term) == 0 {
		return 0, false
	}
	return d.find(packBytes(term))
}

// term is the text of term id.
func (d *termDict) term(id int32) string {
	key := d.keys[id]
	if isLong(key) {
		return d.longs[key.lo]
	}
	return key.String()
}

// String is the text of a packed term.
func (key packedKey) String() string {
	n := int(key.hi >> 56)
	var buf [16]byte
	for i := range min(n, maxPacked) {
		w := key.lo
		if i >= 8 {
			w = key.hi
		}
		buf[i] = byte(w >> (8 * (i & 7)))
	}
	return string(buf[:min(n, maxPacked)])
}

// clone returns a copy that can grow without changing d.
func (d *termDict) clone() *termDict {
	return &termDict{
		slots: slices.Clone(d.slots),
		shift: d.shift,
		mul:   d.mul,
		keys:  slices.Clip(d.keys),
		long:  maps.Clone(d.long),
		longs: slices.Clip(d.longs),
	}
}

// merge adds the terms of o, in o's order, that d lacks, and returns o's ids mapped to
// d's. Merging the dictionaries of consecutive chunks in chunk order gives every term
// the id a single pass over all the chunks would have.
func (d *termDict) merge(o *termDict) []int32 {
	remap := make([]int32, len(o.keys))
	for local := range o.keys {
		remap[local] = d.mergeTerm(o, int32(local))
	}
	return remap
}

// mergeTerm returns the id in d of term local of o, which it adds if d lacks it.
func (d *termDict) mergeTerm(o *termDict, local int32) int32 {
	key := o.keys[local]
	if !isLong(key) {
		return d.id(key)
	}
	term := o.longs[key.lo]
	id, ok := d.long[term]
	if !ok {
		id = d.addLong(term)
	}
	return id
}

// packBytes packs a term of 1 to maxPacked bytes into its key.
func packBytes(term []byte) packedKey {
	var w [2]uint64
	for i, c := range term {
		w[i>>3] |= uint64(c) << (8 * (i & 7))
	}
	return packedKey{lo: w[0], hi: w[1] | uint64(len(term))<<56}
}
