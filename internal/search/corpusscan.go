package search

import "math/bits"

// The corpus builder's ASCII path reads a field eight bytes at a time: one word gives the
// classes of eight bytes at once (SWAR: SIMD within a register), the length of a run of
// letters and digits is a count of trailing zeros, and the run's packed key is the word
// itself, lowercased and masked. Only a run with an upper-case letter after its first
// byte, which the seed's case rules may split, or one of 16 bytes or more, goes byte by
// byte. The result is exactly appendTokensASCII's tokens, checked by FuzzCorpusTermIDs.

const (
	ones  = 0x0101010101010101
	highs = 0x80 * ones
)

// wordMasks classifies the eight bytes of w: each mask has the top bit of every byte
// that is an ASCII letter or digit (alnum), an ASCII upper-case letter (upper), or not
// ASCII (multi). The additions work on bytes below 0x80, so none carries into the next.
func wordMasks(w uint64) (alnum, upper, multi uint64) {
	multi = w & highs
	x := w ^ multi
	ascii := multi ^ highs // the top bit of every ASCII byte
	l := x | 0x20*ones     // letters in a–z, and nothing else there
	letter := (l + (0x80-'a')*ones) &^ (l + (0x80-'z'-1)*ones) & ascii
	digit := (x + (0x80-'0')*ones) &^ (x + (0x80-'9'-1)*ones)
	alnum = letter | digit&ascii
	upper = letter &^ (x << 2) // upper case: bit 5 (0x20) is clear
	return alnum, upper, multi
}

// load8 reads s[i:i+8] as a little-endian word, zero past the end of s: a zero byte is a
// separator, as the end of s is.
func load8(s string, i int) uint64 {
	if i+8 <= len(s) {
		return load64(s, i)
	}
	return loadTail(s, i)
}

// loadTail is load8 for the last seven bytes or fewer, without reading outside s.
func loadTail(s string, i int) uint64 {
	switch {
	case i >= len(s):
		return 0
	case len(s) >= 8:
		return load64(s, len(s)-8) >> (8 * (i + 8 - len(s)))
	}
	return loadShort(s, i)
}

// load64 reads s[i:i+8] as a little-endian word.
func load64(s string, i int) uint64 {
	s = s[i : i+8] // one bounds check, and the compiler merges the loads into one
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// load32 reads s[i:i+4] as a little-endian word.
func load32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// lowerASCII8 lowercases the eight ASCII bytes of x at once: a byte from 'A' to 'Z' gains
// 0x20. Adding 0x3f sets a byte's top bit from 'A' up, adding 0x25 from 'Z'+1 up; no
// addition carries into the next byte, since every byte is below 0x80. A byte at or
// above 0x80 corrupts only the bytes above it, which callers mask off.
func lowerASCII8(x uint64) uint64 {
	upper := (x + 0x3f*ones) &^ (x + 0x25*ones) & highs
	return x | upper>>2
}

// packLowerASCII packs s[start:start+n] (ASCII, 1 <= n <= 15) lowercased as packBytes
// packs a lowercased term.
func packLowerASCII(s string, start, n int) packedKey {
	lo := load8(s, start)
	if n < 8 {
		return packedKey{lo: lowerASCII8(lo & (1<<(8*n&63) - 1)), hi: uint64(n) << 56}
	}
	hi := load8(s, start+8) & (1<<(8*(n-8)&63) - 1)
	return packedKey{lo: lowerASCII8(lo), hi: lowerASCII8(hi) | uint64(n)<<56}
}

// scanASCII writes the keys of the tokens of s to out, which has room for len(s) of them,
// each with tag in its top bits, and returns how many it wrote, tokenizing as
// appendTokensASCII does; a token longer
// than maxPacked goes to b.long and its key says where (longKey). It reports false at
// the first byte that is not ASCII. The common case, a run of up to 15 letters and digits
// without an upper-case letter after its first byte, calls nothing, so the loop keeps
// its few variables in registers.
func (b *corpusBuilder) scanASCII(out []packedKey, s string, tag uint64) (int, bool) {
	n := 0
	for i := 0; i < len(s); {
		var w uint64
		switch {
		case i+8 <= len(s):
			w = load64(s, i)
		case len(s) >= 8: // the last eight bytes, shifted down
			w = load64(s, len(s)-8) >> (8 * (i + 8 - len(s)) & 63)
		default:
			w = loadShort(s, i)
		}
		alnum, upper, multi := wordMasks(w)
		stop := alnum | multi
		if stop == 0 { // eight separators
			i += 8
			continue
		}
		k := bits.TrailingZeros64(stop) & 63
		if multi>>k&1 != 0 {
			return n, false
		}
		if k > 7 { // the run starts further on: read from there
			i += k >> 3
			switch {
			case i+8 <= len(s):
				w = load64(s, i)
			case len(s) >= 8:
				w = load64(s, len(s)-8) >> (8 * (i + 8 - len(s)) & 63)
			default:
				w = loadShort(s, i)
			}
			alnum, upper, multi = wordMasks(w)
		}
		// s[i] starts a run of letters and digits; the byte after it ends the token
		// unless it is not ASCII.
		if end := ^alnum & highs; end != 0 {
			e := bits.TrailingZeros64(end) & 63
			if multi>>e&1 != 0 {
				return n, false
			}
			if upper&(1<<e-1)&^0x80 != 0 { // a case rule may split the run
				j := i + e>>3
				n = b.splitRun(out, n, s, i, j, tag)
				i = j + 1
				continue
			}
			out[n] = packedKey{lo: lowerASCII8(w) & (1<<(e&^7) - 1), hi: uint64(e>>3)<<56 | tag}
			n++
			i += e>>3 + 1 // past the separator after the run
			continue
		}
		var w1 uint64
		switch {
		case i+16 <= len(s):
			w1 = load64(s, i+8)
		case i+8 < len(s): // so len(s) > 8
			w1 = load64(s, len(s)-8) >> (8 * (i + 16 - len(s)) & 63)
		}
		alnum1, upper1, multi1 := wordMasks(w1)
		end1 := ^alnum1 & highs
		e := bits.TrailingZeros64(end1) & 63
		if end1 == 0 || multi1>>e&1 != 0 || upper&^0x80|upper1&(1<<e-1) != 0 {
			// 16 bytes or more, a byte that is not ASCII, or a case rule: byte by byte.
			j, ok := runEnd(s, i+8)
			if !ok {
				return n, false
			}
			n = b.splitRun(out, n, s, i, j, tag)
			i = j + 1
			continue
		}
		out[n] = packedKey{lo: lowerASCII8(w), hi: lowerASCII8(w1)&(1<<(e&^7)-1) | uint64(8+e>>3)<<56 | tag}
		n++
		i += 8 + e>>3 + 1
	}
	return n, true
}

// loadShort is load8 for a string shorter than eight bytes, without reading outside it.
func loadShort(s string, i int) uint64 {
	r := len(s) - i
	if r >= 4 { // two loads of four bytes that overlap on the same bytes
		return uint64(load32(s, i)) | uint64(load32(s, len(s)-4))<<(8*(r-4))
	}
	return uint64(s[i]) | uint64(s[i+r/2])<<(8*(r/2)) | uint64(s[len(s)-1])<<(8*(r-1))
}

// runEnd returns the end of the run of ASCII letters and digits that goes on at s[i],
// and false if a byte that is not ASCII ends it.
func runEnd(s string, i int) (int, bool) {
	for ; i < len(s); i++ {
		switch asciiClass[s[i]] {
		case clsSep:
			return i, true
		case clsMulti:
			return i, false
		}
	}
	return i, true
}

// splitRun writes the keys of the run of ASCII letters and digits s[i:j], which a
// separator or the end of s follows, split by the seed's case rules, to out from n on,
// and returns the new count. The rules are worked out for eight bytes at once, on the
// word that holds them and its neighbours' edge bytes, and only the pieces are visited:
// byte k starts a piece when it is upper case and the byte before it is lower case or a
// digit, or upper case with a lower-case byte after k. Byte j, which ends the run, is
// not a letter or a digit, so the last piece needs no mask of its own; bytes past it are
// masked off.
func (b *corpusBuilder) splitRun(out []packedKey, n int, s string, i, j int, tag uint64) int {
	m := j - i
	start := i
	up, ld, lo := caseMasks(load8(s, i))
	var pup, pld uint64 // the word before's; none before the run
	for base := 0; base < m; base += 8 {
		var next uint64
		if p := i + base + 8; p+8 <= len(s) {
			next = load64(s, p)
		} else {
			next = loadTail(s, p)
		}
		nup, nld, nlo := caseMasks(next)
		split := up & (ld<<8 | pld>>56 | (up<<8|pup>>56)&(lo>>8|nlo<<56))
		if r := m - base; r < 8 {
			split &= 1<<(8*r&63) - 1
		}
		if base == 0 {
			split &^= 0x80 // the run's first byte starts the first piece anyway
		}
		for ; split != 0; split &= split - 1 {
			k := i + base + bits.TrailingZeros64(split)>>3
			if l := k - start; l <= 8 && start+8 <= len(s) { // the common piece, without a call
				out[n] = packedKey{lo: lowerASCII8(load64(s, start)) & (^uint64(0) >> ((64 - 8*l) & 63)), hi: uint64(l)<<56 | tag}
			} else {
				out[n] = b.pieceKey(s, start, k)
				out[n].hi |= tag
			}
			n++
			start = k
		}
		pup, pld = up, ld
		up, ld, lo = nup, nld, nlo
	}
	out[n] = b.pieceKey(s, start, j)
	out[n].hi |= tag
	return n + 1
}

// pieceKey is runKey for a piece of a run: most are short and near the end of s, which
// runKey reaches through three calls and this in none, by reading the last eight bytes
// of s and shifting them down.
func (b *corpusBuilder) pieceKey(s string, i, j int) packedKey {
	n := j - i
	if n > maxPacked || len(s) < 8 {
		return b.runKey(s, i, j)
	}
	var lo uint64
	if i+8 <= len(s) {
		lo = load64(s, i)
	} else {
		lo = load64(s, len(s)-8) >> (8 * (i + 8 - len(s)) & 63)
	}
	if n <= 8 {
		return packedKey{lo: lowerASCII8(lo) & (^uint64(0) >> ((64 - 8*n) & 63)), hi: uint64(n) << 56}
	}
	var hi uint64 // i+8 < j <= len(s)
	if i+16 <= len(s) {
		hi = load64(s, i+8)
	} else {
		hi = load64(s, len(s)-8) >> (8 * (i + 16 - len(s)) & 63)
	}
	return packedKey{lo: lowerASCII8(lo), hi: lowerASCII8(hi)&(1<<(8*(n-8)&63)-1) | uint64(n)<<56}
}

// caseMasks gives the top bit of every byte of w that is an ASCII upper-case letter
// (up), a lower-case letter or a digit (ld), or a lower-case letter (lo).
func caseMasks(w uint64) (up, ld, lo uint64) {
	x := w &^ highs
	l := x | 0x20*ones
	letter := (l + (0x80-'a')*ones) &^ (l + (0x80-'z'-1)*ones) & highs &^ w
	digit := (x + (0x80-'0')*ones) &^ (x + (0x80-'9'-1)*ones) & highs &^ w
	up = letter &^ (x << 2)
	lo = letter &^ up
	return up, lo | digit, lo
}

// runKey is the key of the ASCII term s[i:j] lowercased.
func (b *corpusBuilder) runKey(s string, i, j int) packedKey {
	if n := j - i; n <= maxPacked {
		return packLowerASCII(s, i, n)
	}
	from := len(b.long)
	b.long = append(b.long, s[i:j]...)
	for k := from; k < len(b.long); k++ {
		if c := b.long[k]; 'A' <= c && c <= 'Z' {
			b.long[k] = c + 'a' - 'A'
		}
	}
	return longKey(from, len(b.long))
}

// longKey is the key of the term b.long[from:to]: a length byte of zero, which no
// packed term has, and the offsets.
func longKey(from, to int) packedKey {
	return packedKey{lo: uint64(from) | uint64(to)<<32}
}
