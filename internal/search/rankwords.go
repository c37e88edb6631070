package search

import (
	"math/bits"
	"strings"
)

// This file is the inner loop of a Tool Search ranker build: every word occurrence of the
// catalog passes through fieldIDs, so it reads as little as it can per occurrence (a
// packed key, one slot, a dense word entry) and does the work of a word or of a pair of
// adjacent words once, the first time the build meets it.

// docTermIDs is docTerms with the terms already interned: acc receives intern's id of
// every term docTerms would emit, in the same order and with the same weights.
func (a *nodmixAnalyzer) docTermIDs(d *RankDoc, intern func(string) int32, acc *docAccum) {
	a.wordFrom = len(a.wordArena)
	a.doc = int32(len(a.docWords) + 1)
	a.fieldIDs(fieldName, ownName(d), intern, acc)
	a.fieldIDs(fieldID, d.ID, intern, acc)
	if d.Label != d.Name {
		a.fieldIDs(fieldLabel, d.Label, intern, acc)
	}
	lead, body := splitLead(d.Description)
	a.fieldIDs(fieldDescription, lead, intern, acc)
	a.fieldIDs(fieldBody, body, intern, acc)
	a.fieldIDs(fieldServer, d.Server, intern, acc)
	a.fieldIDs(fieldParams, d.ParamText, intern, acc)
	for _, k := range d.SchemaKeys {
		a.fieldIDs(fieldKeys, k, intern, acc)
	}
	to := len(a.wordArena)
	a.docWords = append(a.docWords, a.wordArena[a.wordFrom:to:to])
}

// fieldIDs adds the terms of one field's text to acc: the terms of every raw word, and
// every pair of adjacent words that are not stop words, joined. The raw words are
// rawWords', found as the text is read, eight bytes at a time; an ASCII word of up to 15
// bytes is looked up by its packed bytes.
func (a *nodmixAnalyzer) fieldIDs(f int, text string, intern func(string) int32, acc *docAccum) {
	if text == "" || nodmixFields[f].weight == 0 {
		return
	}
	prev := int32(-1)
	for i := 0; i < len(text); {
		for i < len(text) && byteClass[text[i]] == classSep {
			i++
		}
		start := i
		i = wordEnd(text, i)
		if i < len(text) && byteClass[text[i]] == classMulti {
			// The rest of the text, from the start of this word, goes the rune way.
			t := &a.sink
			t.raws = rawWordsRunes(t.raws[:0], text, start)
			for _, raw := range t.raws {
				prev = a.occur(f, a.buildWord(raw, intern), prev, intern, acc)
			}
			return
		}
		if i == start {
			break // the end of the text
		}
		var id int32
		if n := i - start; n <= 15 {
			if id = a.short.find2(packASCII(text, start, n)); id < 0 {
				id = a.newWord(text[start:i], intern)
			}
		} else {
			id = a.buildWord(text[start:i], intern)
		}
		prev = a.occur(f, id, prev, intern, acc)
	}
}

// occur adds an occurrence of word id, after word prev (-1 for none or a stop word), to
// acc, and returns what the next word's prev is.
func (a *nodmixAnalyzer) occur(f int, id, prev int32, intern func(string) int32, acc *docAccum) int32 {
	a.noteWord(id)
	h := a.hot[id]
	if h.n == 1 { // most words
		acc.add(f, a.tids[h.off], 1)
	} else {
		for _, t := range a.tids[h.off : h.off+h.n] {
			acc.add(f, t, 1)
		}
	}
	if h.stop {
		return -1
	}
	if prev >= 0 {
		t, ok := a.joins.get(prev, id)
		if !ok {
			t = intern(stem(a.bytes.concat(a.list[prev].lower, a.list[id].lower)))
			a.joins.put(prev, id, t)
		}
		acc.add(f, t, nodmixJoinWeight)
	}
	return id
}

// buildWord returns the id of raw, analyzing it when the build meets it first.
func (a *nodmixAnalyzer) buildWord(raw string, intern func(string) int32) int32 {
	if info := a.cached(raw); info != nil {
		return info.id
	}
	return a.newWord(raw, intern)
}

// newWord analyzes raw, which the cache lacks, into the slabs, interns its terms and caches
// it.
func (a *nodmixAnalyzer) newWord(raw string, intern func(string) int32) int32 {
	t := &a.sink
	t.parts = a.splitWord(t.parts[:0], raw, &t.buf)
	t.stems, t.ids = t.stems[:0], t.ids[:0]
	for i, w := range t.parts {
		if i > 0 {
			if known := a.partWord(w); known != nil {
				// A case part that is a word of its own already has its terms: a compound
				// (get_weather_forecast) mostly joins words the catalog has met alone.
				h := a.hot[known.id]
				t.stems = append(t.stems, known.terms...)
				t.ids = append(t.ids, a.tids[h.off:h.off+h.n]...)
				continue
			}
		}
		if !isNodmixStopWord(w) {
			n := len(t.stems)
			t.stems = a.appendStemVariants(t.stems, w)
			for _, term := range t.stems[n:] {
				t.ids = append(t.ids, intern(term))
			}
		}
	}
	if len(a.infos) == cap(a.infos) {
		a.infos = make([]wordInfo, 0, 1024)
	}
	id := int32(len(a.list))
	stop := isNodmixStopWord(t.parts[0])
	a.infos = append(a.infos, wordInfo{id: id, raw: raw, lower: t.parts[0], stop: stop,
		parts: a.slabStrings(t.parts), terms: a.slabStrings(t.stems)})
	info := &a.infos[len(a.infos)-1]
	a.list = append(a.list, info)
	a.seen = append(a.seen, 0)
	off := len(a.tids)
	a.tids = append(a.tids, t.ids...)
	a.hot = append(a.hot, wordHot{off: int32(off), n: int32(len(info.terms)), stop: stop})
	a.cache(info)
	return id
}

// partWord returns the word that part, a lowercase part of a new word, is when the build has
// met it as a word of its own with no parts but itself (so its terms are the part's); nil
// otherwise.
func (a *nodmixAnalyzer) partWord(part string) *wordInfo {
	if info := a.cached(part); info != nil && len(info.parts) == 1 {
		return info
	}
	return nil
}

// splitWord is splitWords of one raw word, lowercasing an ASCII word into the arena.
func (a *nodmixAnalyzer) splitWord(dst []string, raw string, buf *[]rune) []string {
	if !isASCII(raw) {
		return splitWordsRunes(dst, raw, buf)
	}
	lower := raw
	for i := 0; i < len(raw); i++ {
		if 'A' <= raw[i] && raw[i] <= 'Z' {
			lower = a.bytes.lower(raw)
			break
		}
	}
	dst = append(dst, lower)
	var parts [16][2]int
	switch n := asciiParts(raw, &parts); {
	case n > len(parts):
		dst = appendWord(dst[:len(dst)-1], []rune(raw)) // more parts than the array holds
	case n >= 2:
		for _, p := range parts[:n] {
			dst = append(dst, lower[p[0]:p[1]])
		}
	}
	return dst
}

// appendStemVariants is the function of that name, making its strings in the arena.
func (a *nodmixAnalyzer) appendStemVariants(dst []string, word string) []string {
	if utf16Len(word) > 4 && strings.HasSuffix(word, "ies") {
		base := word[:len(word)-3]
		return append(dst, a.bytes.concat(base, "y"), stem(a.bytes.concat(base, "ie")))
	}
	if s := stem(word); s != "" {
		dst = append(dst, s)
	}
	return dst
}

// noteWord records that the document being analyzed has word id.
func (a *nodmixAnalyzer) noteWord(id int32) {
	if a.seen[id] == a.doc {
		return
	}
	a.seen[id] = a.doc
	if len(a.wordArena) == cap(a.wordArena) {
		// A new chunk, taking the document's words so far: earlier documents keep
		// theirs in the old one.
		cur := a.wordArena[a.wordFrom:]
		a.wordArena = append(make([]int32, 0, max(1<<16, 2*len(cur))), cur...)
		a.wordFrom = 0
	}
	a.wordArena = append(a.wordArena, id)
}

// slabStrings copies v into the string slab; nil when v is empty.
func (a *nodmixAnalyzer) slabStrings(v []string) []string {
	if len(v) == 0 {
		return nil
	}
	if cap(a.strs)-len(a.strs) < len(v) {
		a.strs = make([]string, 0, max(4096, len(v)))
	}
	n := len(a.strs)
	a.strs = append(a.strs, v...)
	return a.strs[n : n+len(v) : n+len(v)]
}

// strArena makes strings in shared blocks of bytes: one allocation, which the collector
// need not scan, for thousands of short strings. A block's bytes never change once a
// string covers them (a block is a strings.Builder's, which only appends), so the strings
// stay valid whatever comes after.
type strArena struct {
	b *strings.Builder
}

const strArenaBlock = 32 << 10

func (s *strArena) room(n int) {
	if s.b == nil || s.b.Cap()-s.b.Len() < n {
		s.b = new(strings.Builder)
		s.b.Grow(max(strArenaBlock, n))
	}
}

// concat returns x + y.
func (s *strArena) concat(x, y string) string {
	s.room(len(x) + len(y))
	n := s.b.Len()
	s.b.WriteString(x)
	s.b.WriteString(y)
	return s.b.String()[n:]
}

// lower returns ASCII w lowercased.
func (s *strArena) lower(w string) string {
	s.room(len(w))
	n := s.b.Len()
	var buf [64]byte
	for len(w) > 0 {
		k := copy(buf[:], w)
		for i, c := range buf[:k] {
			if 'A' <= c && c <= 'Z' {
				buf[i] = c + 'a' - 'A'
			}
		}
		s.b.Write(buf[:k])
		w = w[k:]
	}
	return s.b.String()[n:]
}

// wordEnd returns the end of the run of ASCII word bytes (rawWords' classWord) from i.
// Words are runs of letters, digits and underscores: eight bytes are classified at once.
func wordEnd(text string, i int) int {
	for i+8 <= len(text) {
		x := read64(text, i)
		if x&swarHigh != 0 {
			break // a byte of a multi-byte rune: the byte loop stops at it
		}
		if m := swarWordBytes(x); m != swarHigh {
			return i + bits.TrailingZeros64(^m&swarHigh)/8
		}
		i += 8
	}
	for i < len(text) && byteClass[text[i]] == classWord {
		i++
	}
	return i
}

// swarWordBytes sets the high bit of every byte of x, all of them ASCII, that is a
// letter, a digit or an underscore. No sum carries into the next byte: every byte is
// below 0x80 and no addend reaches 0x80.
func swarWordBytes(x uint64) uint64 {
	l := x | swarOnes*0x20 // capitals to small letters; a byte that was neither stays neither
	letters := (l + swarOnes*(0x80-'a')) &^ (l + swarOnes*(0x7f-'z'))
	digits := (x + swarOnes*(0x80-'0')) &^ (x + swarOnes*(0x7f-'9'))
	under := ^((x ^ swarOnes*'_') + swarOnes*0x7f)
	return (letters | digits | under) & swarHigh
}

// load64 reads the eight bytes of s from i, little-endian.
func read64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// packASCII is packWord(s[i:i+n]) for an ASCII word of 1 to 15 bytes. It reads the word
// eight bytes at a time, the last eight ending where the word ends, unless s is too short
// for that.
func packASCII(s string, i, n int) (k0, k1 uint64) {
	switch end := i + n; {
	case end < 8:
		for j := range n {
			k0 |= uint64(s[i+j]) << (8 * j)
		}
	case n <= 8:
		k0 = read64(s, end-8) >> (64 - 8*n)
	default:
		k0 = read64(s, i)
		k1 = read64(s, end-8) >> (128 - 8*n)
	}
	return k0, k1 | uint64(n)<<56
}
