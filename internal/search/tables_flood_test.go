package search

import "testing"

// inverse is the multiplicative inverse of an odd x modulo 2^64 (Newton's iteration).
func inverse(x uint64) uint64 {
	y := x
	for range 6 {
		y *= 2 - x*y
	}
	return y
}

// maxSpreadRun bounds the longest probe run of 4,096 keys spread as random keys spread: in 300
// tables the longest seen was under 50. Keys that cluster make runs of thousands (without
// mixHash, one table in a few hundred did: 2,927 slots).
const maxSpreadRun = 256

// longestRun is the longest walk from a key's home slot to the key, over keys.
func longestRun(t *shortWords, keys [][2]uint64) int {
	mask := uint64(len(t.slots) - 1)
	longest := 0
	for _, k := range keys {
		n := 0
		for i := t.home(k); t.slots[i].key != k; i = (i + 1) & mask {
			n++
		}
		longest = max(longest, n)
	}
	return longest
}

// TestShortWordsResistCraftedKeys: keys crafted to share one home slot under a table's
// multipliers (known here, as they would be if they were fixed) walk one long run in that
// table, and spread in a table of its own multipliers, as every table draws.
func TestShortWordsResistCraftedKeys(t *testing.T) {
	var known shortWords
	known.init(0)
	const n = 4096
	// k0·m0 + k1·m1 = c for every key: they all hash alike under known's multipliers.
	c, inv := uint64(0x1234_5678_9abc_def0), inverse(known.mul[0])
	keys := make([][2]uint64, n)
	for i := range keys {
		k1 := uint64(i+1) | 7<<56 // a length byte, as packWord sets it
		keys[i] = [2]uint64{(c - k1*known.mul[1]) * inv, k1}
	}
	for i, k := range keys {
		known.insert(k, int32(i))
	}
	if got := longestRun(&known, keys); got < n/2 {
		t.Fatalf("crafted keys under the multipliers they were crafted for: longest run %d, want about %d (the test's keys do not collide)", got, n)
	}
	var other shortWords
	other.init(0)
	if other.mul == known.mul {
		t.Fatal("two tables drew the same multipliers")
	}
	for i, k := range keys {
		other.insert(k, int32(i))
	}
	if got := longestRun(&other, keys); got > maxSpreadRun {
		t.Errorf("crafted keys in a table of other multipliers: longest run %d, want at most %d", got, maxSpreadRun)
	}
	for i, k := range keys {
		if id := other.find(k); id != int32(i) {
			t.Fatalf("find(%x) = %d, want %d", k, id, i)
		}
	}
}

// TestPairTableMultipliers: every pair table draws its own multiplier, and a table that grows
// keeps finding what it holds.
func TestPairTableMultipliers(t *testing.T) {
	var a, b pairTable
	for i := range int32(5000) {
		a.put(i, i+1, i)
		b.put(i, i+1, i)
	}
	if a.mul == b.mul || a.mul&1 == 0 {
		t.Fatalf("multipliers %x and %x: want two odd, different ones", a.mul, b.mul)
	}
	for i := range int32(5000) {
		if id, ok := a.get(i, i+1); !ok || id != i {
			t.Fatalf("get(%d, %d) = %d, %v", i, i+1, id, ok)
		}
	}
	if _, ok := a.get(1, 1); ok {
		t.Error("get found a pair never put")
	}
}

// TestTermDictResistCraftedKeys is TestShortWordsResistCraftedKeys for the discovery corpus's
// dictionary.
func TestTermDictResistCraftedKeys(t *testing.T) {
	known := newTermDict(0)
	const n = 4096
	c, inv := uint64(0x0fed_cba9_8765_4321), inverse(known.mul[0])
	keys := make([]packedKey, n)
	for i := range keys {
		hi := uint64(i+1) | 7<<56 // a length byte, as packBytes sets it
		keys[i] = packedKey{lo: (c - hi*known.mul[1]) * inv, hi: hi}
	}
	run := func(d *termDict) int {
		mask := uint64(len(d.slots) - 1)
		longest := 0
		for _, k := range keys {
			n := 0
			for i := d.slot(k); d.keys[d.slots[i]-1] != k; i = (i + 1) & mask {
				n++
			}
			longest = max(longest, n)
		}
		return longest
	}
	for _, k := range keys {
		known.id(k)
	}
	if got := run(known); got < n/2 {
		t.Fatalf("crafted keys under the multipliers they were crafted for: longest run %d, want about %d", got, n)
	}
	other := newTermDict(0)
	if other.mul == known.mul {
		t.Fatal("two dictionaries drew the same multipliers")
	}
	for i, k := range keys {
		if id := other.id(k); id != int32(i) {
			t.Fatalf("id(%x) = %d, want %d (ids in order of addition)", k, id, i)
		}
	}
	if got := run(other); got > maxSpreadRun {
		t.Errorf("crafted keys in a dictionary of other multipliers: longest run %d, want at most %d", got, maxSpreadRun)
	}
}
