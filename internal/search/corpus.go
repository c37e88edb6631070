package search

import (
	"encoding/binary"
	"hash/maphash"
	"maps"
	"runtime"
	"slices"
	"sync"
)

// Corpus holds documents tokenized once, ready to be indexed in any subset. A Corpus is
// immutable after construction and safe for concurrent use; Update derives a new one.
type Corpus struct {
	terms map[string]int32 // term → id
	vocab []string         // id → term
	docs  []Doc            // Update compares content; BM25 breaks ties by Name
	// Document i's terms, in order of first occurrence, are termIDs[start[i]:start[i+1]]
	// with weighted frequencies freqs[start[i]:start[i+1]].
	start   []int32
	termIDs []int32
	freqs   []uint32
	lens    []uint32
}

// NewCorpus tokenizes docs. The corpus keeps docs (for Update): the caller must not
// modify them afterwards.
func NewCorpus(docs []Doc) *Corpus {
	return (&Corpus{}).Update(docs)
}

// minDocsPerWorker keeps small corpora on one goroutine, where starting more would
// cost more than it saves.
const minDocsPerWorker = 2048

// Update returns a corpus of docs that reuses c's tokenization for every document
// whose content is unchanged, so a catalog change costs only the changed documents.
// Large batches of new documents are tokenized on several goroutines, which Update
// waits for. c itself is not modified. Like NewCorpus, the new corpus keeps docs.
func (c *Corpus) Update(docs []Doc) *Corpus {
	nc := &Corpus{
		terms: maps.Clone(c.terms),
		vocab: slices.Clip(c.vocab),
		docs:  docs,
		start: make([]int32, len(docs)+1),
		lens:  make([]uint32, len(docs)),
	}
	if nc.terms == nil {
		nc.terms = make(map[string]int32, len(docs))
	}
	reuse := c.unchanged(docs)
	var todo []int
	for i, j := range reuse {
		if j < 0 {
			todo = append(todo, i)
		}
	}
	// Tokenize: one builder on the corpus dictionary, or one per chunk of todo, each
	// on a dictionary of its own that is merged below in chunk order, so that term ids
	// never depend on scheduling.
	workers := min(runtime.GOMAXPROCS(0), len(todo)/minDocsPerWorker)
	var parts []*corpusBuilder
	if workers <= 1 {
		parts = []*corpusBuilder{{terms: nc.terms, vocab: nc.vocab}}
		parts[0].build(docs, todo)
		nc.vocab = parts[0].vocab
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			chunk := todo[w*len(todo)/workers : (w+1)*len(todo)/workers]
			b := &corpusBuilder{terms: map[string]int32{}}
			parts = append(parts, b)
			wg.Go(func() { b.build(docs, chunk) })
		}
		wg.Wait()
		for _, b := range parts {
			remap := make([]int32, len(b.vocab))
			for local, term := range b.vocab {
				id, ok := nc.terms[term]
				if !ok {
					id = int32(len(nc.vocab))
					nc.terms[term] = id
					nc.vocab = append(nc.vocab, term)
				}
				remap[local] = id
			}
			for k, id := range b.termIDs {
				b.termIDs[k] = remap[id]
			}
		}
	}
	// Assemble in document order; a fresh single build already is.
	if len(parts) == 1 && len(todo) == len(docs) {
		b := parts[0]
		nc.termIDs, nc.freqs, nc.lens = b.termIDs, b.freqs, b.lens
		copy(nc.start, b.ends)
		return nc
	}
	total := 0
	for _, b := range parts {
		total += len(b.termIDs)
	}
	for _, j := range reuse {
		if j >= 0 {
			total += int(c.start[j+1] - c.start[j])
		}
	}
	nc.termIDs = make([]int32, 0, total)
	nc.freqs = make([]uint32, 0, total)
	part, k := 0, 0 // next built document: parts[part].docs[k]
	for i, j := range reuse {
		if j >= 0 {
			lo, hi := c.start[j], c.start[j+1]
			nc.termIDs = append(nc.termIDs, c.termIDs[lo:hi]...)
			nc.freqs = append(nc.freqs, c.freqs[lo:hi]...)
			nc.lens[i] = c.lens[j]
		} else {
			for k == len(parts[part].lens) {
				part, k = part+1, 0
			}
			b := parts[part]
			lo, hi := b.ends[k], b.ends[k+1]
			nc.termIDs = append(nc.termIDs, b.termIDs[lo:hi]...)
			nc.freqs = append(nc.freqs, b.freqs[lo:hi]...)
			nc.lens[i] = b.lens[k]
			k++
		}
		nc.start[i+1] = int32(len(nc.termIDs))
	}
	return nc
}

// unchanged maps every document of docs to an old document of c with the same
// content, or to -1. Hashing is cheap next to tokenizing, and a hash match is
// confirmed field by field.
func (c *Corpus) unchanged(docs []Doc) []int32 {
	reuse := make([]int32, len(docs))
	for i := range reuse {
		reuse[i] = -1
	}
	if len(c.docs) == 0 {
		return reuse
	}
	seed := maphash.MakeSeed()
	old := make(map[uint64][]int32, len(c.docs))
	for j := range c.docs {
		h := hashDoc(seed, &c.docs[j])
		old[h] = append(old[h], int32(j))
	}
	for i := range docs {
		for _, cand := range old[hashDoc(seed, &docs[i])] {
			if sameDoc(&c.docs[cand], &docs[i]) {
				reuse[i] = cand
				break
			}
		}
	}
	return reuse
}

func hashDoc(seed maphash.Seed, d *Doc) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	for _, f := range [...]string{d.Name, d.Label, d.ServerName, d.MCPToolName, d.Summary} {
		h.WriteString(f)
		h.WriteByte(0) // a separator: ("ab", "") and ("a", "b") hash apart
	}
	for _, k := range d.SchemaKeys {
		h.WriteString(k)
		h.WriteByte(0)
	}
	return h.Sum64()
}

func sameDoc(a, b *Doc) bool {
	return a.Name == b.Name && a.Label == b.Label && a.ServerName == b.ServerName &&
		a.MCPToolName == b.MCPToolName && a.Summary == b.Summary && slices.Equal(a.SchemaKeys, b.SchemaKeys)
}

// corpusBuilder tokenizes documents into term ids of its dictionary, reusing its
// buffers. A builder belongs to one goroutine.
type corpusBuilder struct {
	terms map[string]int32 // the dictionary: term → id
	vocab []string         // id → term
	// The output: built document k has termIDs[ends[k]:ends[k+1]] with weighted
	// frequencies freqs[…] and length lens[k].
	termIDs []int32
	freqs   []uint32
	ends    []int32
	lens    []uint32

	sc tokenScanner
	// slot[t] is where term t sits in termIDs when slotDoc[t] is the document being
	// built; documents count from one, so a zero slotDoc means never.
	slot    []int32
	slotDoc []int32
	doc     int32
	// fieldIDs caches the term ids of this document's fields, which often repeat
	// (the label defaults to the name).
	fieldIDs []int32
	fields   []fieldSpan
	short    shortTerms // term ids of tokens of up to 15 bytes
	// repeated caches the term ids of short fields across documents: server names and
	// schema keys ("query", "limit", "owner") recur across a catalog. It is direct-mapped
	// on a hash of a few bytes of the field: an entry is confirmed by comparing the text,
	// and two fields that share a slot only cost a tokenization when they alternate.
	repeated    *[repeatedSlots]repeatedField
	repeatedIDs []int32
}

const repeatedSlots = 4096

type repeatedField struct {
	s        string
	from, to int32 // span in repeatedIDs
}

// repeatedSlot hashes a non-empty field of at most maxRepeatedField bytes by its length
// and its first, middle and last bytes: cheaper than hashing it all, and enough to
// spread the names and keys of a catalog.
func repeatedSlot(s string) int {
	h := uint32(len(s)) | uint32(s[0])<<8 | uint32(s[len(s)/2])<<16 | uint32(s[len(s)-1])<<24
	h *= 0x9e3779b1
	return int(h >> (32 - 12))
}

// maxRepeatedField is the longest field whose term ids are cached across documents.
const maxRepeatedField = 32

type fieldSpan struct {
	s        string
	from, to int
}

// build tokenizes docs[i] for every i in which, in order.
func (b *corpusBuilder) build(docs []Doc, which []int) {
	b.termIDs = make([]int32, 0, 32*len(which))
	b.freqs = make([]uint32, 0, 32*len(which))
	b.ends = append(make([]int32, 0, len(which)+1), 0)
	b.lens = make([]uint32, 0, len(which))
	b.short.init(min(2*len(which), 1<<13))
	b.repeated = new([repeatedSlots]repeatedField)
	for _, i := range which {
		b.lens = append(b.lens, b.addDoc(&docs[i]))
		b.ends = append(b.ends, int32(len(b.termIDs)))
	}
}

func (b *corpusBuilder) addDoc(d *Doc) uint32 {
	b.doc++
	b.fieldIDs = b.fieldIDs[:0]
	b.fields = b.fields[:0]
	var length uint32
	length += b.addField(d.Name, weightName, false)
	length += b.addField(d.Label, weightLabel, false)
	length += b.addField(d.ServerName, weightServerName, true)
	length += b.addField(d.MCPToolName, weightMCPToolName, false)
	length += b.addField(d.Summary, weightSummary, false)
	for _, k := range d.SchemaKeys {
		length += b.addField(k, weightSchemaKey, true)
	}
	return length
}

// addField adds a field's terms; recurring says the field's text recurs across documents
// (server names, schema keys), so its term ids are worth caching.
func (b *corpusBuilder) addField(s string, weight uint32, recurring bool) uint32 {
	if s == "" {
		return 0
	}
	ids := b.fieldTermIDs(s, recurring)
	for _, id := range ids {
		if b.slotDoc[id] == b.doc {
			b.freqs[b.slot[id]] += weight
			continue
		}
		b.slotDoc[id] = b.doc
		b.slot[id] = int32(len(b.termIDs))
		b.termIDs = append(b.termIDs, id)
		b.freqs = append(b.freqs, weight)
	}
	return weight * uint32(len(ids))
}

func (b *corpusBuilder) fieldTermIDs(s string, recurring bool) []int32 {
	for _, f := range b.fields {
		if f.s == s {
			return b.fieldIDs[f.from:f.to]
		}
	}
	recurring = recurring && len(s) <= maxRepeatedField
	slot := 0
	if recurring {
		slot = repeatedSlot(s)
		if e := &b.repeated[slot]; e.s == s {
			return b.repeatedIDs[e.from:e.to]
		}
	}
	from := len(b.fieldIDs)
	if !b.asciiTermIDs(s) {
		b.fieldIDs = b.fieldIDs[:from]
		b.sc.scan(s)
		start := int32(0)
		for _, end := range b.sc.ends {
			b.fieldIDs = append(b.fieldIDs, b.termID(b.sc.out[start:end]))
			start = end
		}
	}
	for _, id := range b.fieldIDs[from:] {
		for int(id) >= len(b.slot) {
			b.slot = append(b.slot, 0)
			b.slotDoc = append(b.slotDoc, 0)
		}
	}
	b.fields = append(b.fields, fieldSpan{s: s, from: from, to: len(b.fieldIDs)})
	if recurring {
		at := int32(len(b.repeatedIDs))
		b.repeatedIDs = append(b.repeatedIDs, b.fieldIDs[from:]...)
		b.repeated[slot] = repeatedField{s: s, from: at, to: int32(len(b.repeatedIDs))}
	}
	return b.fieldIDs[from:]
}

// asciiTermIDs appends the term ids of s to fieldIDs when s is ASCII, tokenizing as
// appendTokensASCII does; a token of up to 15 bytes is packed into its short-table key
// straight from s, eight bytes at a time, so that a known word costs one probe and no
// copy. It reports false at the first byte that is not ASCII, having appended only part
// of the ids.
func (b *corpusBuilder) asciiTermIDs(s string) bool {
	for i := 0; i < len(s); {
		for i < len(s) && asciiClass[s[i]] == clsSep {
			i++
		}
		if i == len(s) {
			break
		}
		prev := clsSep
		start := i // the token is s[start:i], lowercased
		for ; i < len(s); i++ {
			cur := asciiClass[s[i]]
			if cur == clsLower || cur == clsDigit { // the common case first
				prev = cur
				continue
			}
			if cur == clsSep {
				break
			}
			if cur == clsMulti {
				return false
			}
			if cur == clsUpper && prev != clsSep {
				next := clsSep
				if i+1 < len(s) {
					next = asciiClass[s[i+1]]
				}
				if splitBefore(prev, cur, next) {
					b.fieldIDs = append(b.fieldIDs, b.asciiTermID(s, start, i))
					start = i
				}
			}
			prev = cur
		}
		b.fieldIDs = append(b.fieldIDs, b.asciiTermID(s, start, i))
	}
	return true
}

// maxPacked is the longest token a short-table key holds, in bytes.
const maxPacked = 15

// asciiTermID is termID for the token s[start:end] lowercased, which is ASCII.
func (b *corpusBuilder) asciiTermID(s string, start, end int) int32 {
	n := end - start
	if n > maxPacked {
		tok := []byte(s[start:end])
		for i, c := range tok {
			if 'A' <= c && c <= 'Z' {
				tok[i] = c + 'a' - 'A'
			}
		}
		return b.termID(tok)
	}
	key := packLowerASCII(s, start, n)
	if id, ok := b.short.get(key); ok {
		return id
	}
	var buf [maxPacked]byte
	tok := buf[:n]
	for i := range n {
		c := s[start+i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		tok[i] = c
	}
	return b.termID(tok)
}

// packLowerASCII packs s[start:start+n] (ASCII, 1 <= n <= 15) lowercased as termID packs
// a short token: bytes in little-endian order over two words, the length in the top byte.
func packLowerASCII(s string, start, n int) [2]uint64 {
	var lo, hi uint64
	if start+16 <= len(s) {
		lo, hi = load64(s, start), load64(s, start+8)
		if n < 8 {
			lo &= 1<<(8*n) - 1
			hi = 0
		} else {
			hi &= 1<<(8*(n-8)) - 1
		}
	} else { // near the end of s: through a zeroed buffer
		var buf [16]byte
		copy(buf[:], s[start:start+n])
		lo, hi = binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])
	}
	return [2]uint64{lowerASCII8(lo), lowerASCII8(hi) | uint64(n)<<56}
}

// load64 reads s[i:i+8] as a little-endian word.
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// lowerASCII8 lowercases the eight ASCII bytes of x at once: a byte from 'A' to 'Z' gains
// 0x20. Adding 0x3f sets a byte's top bit from 'A' up, adding 0x25 from 'Z'+1 up; no
// addition carries into the next byte, since every byte is below 0x80.
func lowerASCII8(x uint64) uint64 {
	const ones = 0x0101010101010101
	upper := (x + 0x3f*ones) &^ (x + 0x25*ones) & (0x80 * ones)
	return x | upper>>2
}

// termID returns the id of tok, adding it to the dictionary if it is new. Tokens of up
// to 15 bytes, nearly all words, go through a map keyed by the packed bytes, which
// hashes and compares faster than one keyed by strings.
func (b *corpusBuilder) termID(tok []byte) int32 {
	var key [2]uint64
	short := len(tok) <= 15
	if short {
		for i, c := range tok {
			key[i>>3] |= uint64(c) << (8 * (i & 7))
		}
		key[1] |= uint64(len(tok)) << 56
		if id, ok := b.short.get(key); ok {
			return id
		}
	}
	id, ok := b.terms[string(tok)]
	if !ok {
		id = int32(len(b.vocab))
		term := string(tok)
		b.terms[term] = id
		b.vocab = append(b.vocab, term)
	}
	if short {
		b.short.put(key, id)
	}
	return id
}

// shortTerms maps tokens of up to 15 bytes, packed into two words with the length in the
// top byte, to term ids. It is an open-addressing table with a multiplicative hash: the
// keys are already dense words, and Go's map spends most of a build hashing them. A
// packed key is never zero (the length byte is at least one), so zero marks a free slot.
type shortTerms struct {
	slots []shortSlot // a key and its id side by side: one cache line per probe
	mask  uint64
	n     int
}

type shortSlot struct {
	key [2]uint64
	id  int32
}

func (t *shortTerms) init(hint int) {
	size := 16
	for size < 2*hint {
		size <<= 1
	}
	t.slots = make([]shortSlot, size)
	t.mask = uint64(size - 1)
	t.n = 0
}

func (t *shortTerms) slot(key [2]uint64) uint64 {
	h := (key[0] ^ key[1]*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd
	return (h ^ h>>29) & t.mask
}

func (t *shortTerms) get(key [2]uint64) (int32, bool) {
	for i := t.slot(key); ; i = (i + 1) & t.mask {
		switch s := &t.slots[i]; s.key {
		case key:
			return s.id, true
		case [2]uint64{}:
			return 0, false
		}
	}
}

func (t *shortTerms) put(key [2]uint64, id int32) {
	if 2*(t.n+1) > len(t.slots) { // keep at most half full: probes stay short
		old := t.slots
		t.init(len(old))
		for _, s := range old {
			if s.key != ([2]uint64{}) {
				t.put(s.key, s.id)
			}
		}
	}
	i := t.slot(key)
	for t.slots[i].key != ([2]uint64{}) && t.slots[i].key != key {
		i = (i + 1) & t.mask
	}
	if t.slots[i].key == ([2]uint64{}) {
		t.n++
	}
	t.slots[i] = shortSlot{key: key, id: id}
}

// Len is the number of documents.
func (c *Corpus) Len() int { return len(c.docs) }

// DocLen is the seed's length of document i: the sum of its weighted term frequencies.
func (c *Corpus) DocLen(i int) int { return int(c.lens[i]) }

// DocTerms lists document i's terms in order of first occurrence with their weighted
// frequencies.
func (c *Corpus) DocTerms(i int) []TermFreq {
	lo, hi := c.start[i], c.start[i+1]
	out := make([]TermFreq, 0, hi-lo)
	for j := lo; j < hi; j++ {
		out = append(out, TermFreq{Term: c.vocab[c.termIDs[j]], Freq: int(c.freqs[j])})
	}
	return out
}
