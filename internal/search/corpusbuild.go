package search

import (
	"math/bits"
	"slices"
	"sync"
)

// docTerm is a term of a document with its weighted frequency: id and frequency side by
// side, since every reader wants both.
type docTerm struct {
	id   int32
	freq uint32
}

// corpusBuilder tokenizes documents into term ids of its dictionary, reusing its
// buffers. A builder belongs to one goroutine.
type corpusBuilder struct {
	dict *termDict
	// The output: built document k has terms[ends[k]:ends[k+1]] and length lens[k].
	terms []docTerm
	ends  []int32
	lens  []uint32

	sc tokenScanner
	// tab is the builder's copy of the dictionary's table with each short term's key and
	// id inline, and where the term sits in terms if the document being built has it, so
	// that a lookup reads one entry, not a slot, a key and a seen entry in three arrays.
	// The dictionary's own table is written from it when the build ends. seenLong[j] is the
	// same place of long term j.
	tab      []builderSlot
	tabShift uint8
	tabLen   int  // the short terms in tab
	cached   bool // tab caches the dictionary's terms rather than holding them all
	seenLong []int32
	from     int32       // where the document being built starts in terms
	keys     []packedKey // the keys of this document's fields, which often repeat (the label defaults to the name)
	long     []byte      // this document's terms longer than maxPacked, lowercased
	sink     byte        // keeps touchDoc's reads
	// A builder of a meeting tokenizes the documents it claims from it, from the front of
	// the meeting's documents, or from the back when backward, document by document
	// downwards; its terms, lens and ends are then in that order.
	meet     *meeting
	backward bool
	region   int // where terms starts in a fresh build's array of all terms
}

// meeting is the documents docs[lo:hi] not yet claimed by the two builders that share
// them, one from each end: wherever they meet, the one that went faster took more, so
// neither waits long for the other however the machine shares its CPUs between them.
// Where they meet changes no term id (the chunks are merged in document order).
type meeting struct {
	size   int // the documents to share, fixed
	mu     sync.Mutex
	lo, hi int
}

// meetBatch is how many documents a builder claims at a time: enough that claims cost
// little, few enough that the two finish close together.
const meetBatch = 64

// claim takes up to n documents from the front, or from the back when back, and returns
// them as docs[from:to]; from == to when none are left.
func (m *meeting) claim(back bool, n int) (from, to int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n = min(n, m.hi-m.lo)
	if back {
		m.hi -= n
		return m.hi, m.hi + n
	}
	m.lo += n
	return m.lo - n, m.lo
}

// builderSlot is a slot of the builder's table: a short term's key (hi zero when the slot
// is free, since a packed key's length byte is not), its id, and at, the term's place in
// terms if it is at or above from, in the document being built; -1 before any.
type builderSlot struct {
	key packedKey
	id  int32
	at  int32
}

// build tokenizes docs[i] for every i in which (every document of docs when which is
// nil), in order, appending to terms and lens, which it allocates if the caller has not.
func (b *corpusBuilder) build(docs []Doc, which []int) {
	count := len(which)
	doc := func(n int) *Doc { return &docs[which[n]] }
	if which == nil {
		count = len(docs)
		doc = func(n int) *Doc { return &docs[n] }
	}
	if b.terms == nil {
		b.terms = make([]docTerm, 0, estimateTerms(docs, which))
	}
	if b.lens == nil {
		b.lens = make([]uint32, 0, count)
	}
	b.ends = append(make([]int32, 0, count+1), 0)
	b.loadTable(count)
	var sink byte
	for n := range count {
		if n+touchAhead < count {
			sink += touchDoc(doc(n + touchAhead))
		}
		b.lens = append(b.lens, b.addDoc(doc(n)))
		b.ends = append(b.ends, int32(len(b.terms)))
	}
	b.sink = sink
	b.storeTable()
}

// buildMet tokenizes the documents it claims from b.meet, which are in docs, appending
// to terms and lens, which the caller has allocated.
func (b *corpusBuilder) buildMet(docs []Doc) {
	b.ends = append(make([]int32, 0, b.meet.size/2+1), 0)
	b.loadTable(b.meet.size)
	var sink byte
	for {
		from, to := b.meet.claim(b.backward, meetBatch)
		if from == to {
			break
		}
		for n := range to - from {
			k := from + n
			ahead := k + touchAhead
			if b.backward {
				k = to - 1 - n
				ahead = k - touchAhead
			}
			if 0 <= ahead && ahead < len(docs) {
				sink += touchDoc(&docs[ahead])
			}
			b.lens = append(b.lens, b.addDoc(&docs[k]))
			b.ends = append(b.ends, int32(len(b.terms)))
		}
	}
	b.sink = sink
	b.storeTable()
}

// forwards puts the documents of a backward builder in document order, and renumbers
// its dictionary's terms in the order of their first occurrence in that order, which
// merge reads them in. The table and the map of long terms are not renumbered: merge
// reads only keys and longs.
func (b *corpusBuilder) forwards() {
	nd := len(b.lens)
	terms := make([]docTerm, 0, len(b.terms))
	ends := append(make([]int32, 0, nd+1), 0)
	lens := make([]uint32, 0, nd)
	perm := make([]int32, len(b.dict.keys))
	for i := range perm {
		perm[i] = -1
	}
	keys := make([]packedKey, 0, len(b.dict.keys))
	longs := make([]string, 0, len(b.dict.longs))
	for k := nd - 1; k >= 0; k-- {
		for _, t := range b.terms[b.ends[k]:b.ends[k+1]] {
			if perm[t.id] < 0 {
				perm[t.id] = int32(len(keys))
				key := b.dict.keys[t.id]
				if isLong(key) {
					longs = append(longs, b.dict.longs[key.lo])
					key.lo = uint64(len(longs) - 1)
				}
				keys = append(keys, key)
			}
			terms = append(terms, docTerm{id: perm[t.id], freq: t.freq})
		}
		ends = append(ends, int32(len(terms)))
		lens = append(lens, b.lens[k])
	}
	b.terms, b.ends, b.lens, b.backward = terms, ends, lens, false
	b.dict.keys, b.dict.longs = keys, longs
}

// loadTable makes b.tab the dictionary's table with the keys and ids inline. When the
// dictionary already has terms, as in an update of a few documents, b.tab is instead a
// cache of the terms of the count documents to build, in front of the dictionary, and
// sized for them: it would cost more to fill with every term than the documents take.
func (b *corpusBuilder) loadTable(count int) {
	d := b.dict
	if len(d.keys) == 0 {
		b.tab, b.tabShift = make([]builderSlot, len(d.slots)), d.shift
		return
	}
	b.cached = true
	size := 1 << bits.Len(uint(max(minDictSlots, min(8*count, len(d.slots)))-1))
	b.tab, b.tabShift = make([]builderSlot, size), uint8(64-bits.TrailingZeros(uint(size)))
}

// storeTable writes b.tab's ids back to the dictionary's table, which then finds every
// short term the build added.
func (b *corpusBuilder) storeTable() {
	d := b.dict
	if b.cached {
		return // the dictionary has kept its table up to date
	}
	if len(d.slots) != len(b.tab) {
		d.slots = make([]uint32, len(b.tab))
	}
	d.shift = b.tabShift
	for i := range b.tab {
		e := &b.tab[i]
		if e.key.hi == 0 {
			d.slots[i] = 0
		} else {
			d.slots[i] = uint32(e.id) + 1
		}
	}
}

// touchAhead is how many documents ahead of the one it tokenizes build reads the text of
// the next: a catalog's strings lie scattered over the heap, and reading a field's first
// bytes while the CPU still works on earlier documents overlaps the cache misses that
// would otherwise stall tokenization at the start of every field.
const touchAhead = 6

// touchDoc reads a byte of every cache line of d's text and returns their sum, which the
// caller keeps so that the reads are not optimized away.
func touchDoc(d *Doc) byte {
	var x byte
	for _, s := range [...]string{d.Name, d.Label, d.ServerName, d.MCPToolName, d.Summary} {
		for j := 0; j < len(s); j += 64 {
			x += s[j]
		}
	}
	for _, k := range d.SchemaKeys {
		if k != "" {
			x += k[0]
		}
	}
	return x
}

func (b *corpusBuilder) addDoc(d *Doc) uint32 {
	b.from = int32(len(b.terms))
	b.keys = b.keys[:0]
	b.long = b.long[:0]
	// The document's length is the sum of its keys' weights, counted here by field.
	name := b.scan(d.Name, weightName)
	label := name
	if d.Label != d.Name {
		label = b.scan(d.Label, weightLabel)
	} else {
		b.again(name, weightLabel)
	}
	length := weightName*name.n() + weightLabel*label.n()
	length += weightServerName * b.scan(d.ServerName, weightServerName).n()
	mcp := label
	switch d.MCPToolName {
	case d.Name:
		mcp = name
		b.again(name, weightMCPToolName)
	case d.Label:
		b.again(label, weightMCPToolName)
	default:
		mcp = b.scan(d.MCPToolName, weightMCPToolName)
	}
	length += weightMCPToolName * mcp.n()
	length += weightSummary * b.scan(d.Summary, weightSummary).n()
	k0 := len(b.keys)
	for _, k := range d.SchemaKeys {
		b.scan(k, weightSchemaKey)
	}
	length += weightSchemaKey * uint32(len(b.keys)-k0)
	b.add()
	return length
}

// A key in b.keys carries its field's weight in its top four bits, which a packed key
// leaves free (its length is at most 15): the document's keys are then added in one
// loop, and the weights (at most 6) need no array of their own.
const (
	weightShift = 60
	keyBits     = 1<<weightShift - 1
)

// keySpan is a field's keys: keys[from:to].
type keySpan struct{ from, to int }

func (f keySpan) n() uint32 { return uint32(f.to - f.from) }

// scan appends the keys of the tokens of s, weighted, to b.keys.
func (b *corpusBuilder) scan(s string, weight uint64) keySpan {
	from := len(b.keys)
	if s == "" {
		return keySpan{from, from}
	}
	tag := weight << weightShift
	if cap(b.keys)-from < len(s) {
		b.keys = slices.Grow(b.keys, len(s)) // only now a pointer write, which the GC may have to see
	}
	out := b.keys[from : from+len(s)]
	if n, ok := b.scanASCII(out, s, tag); ok {
		b.keys = b.keys[:from+n]
		return keySpan{from, from + n}
	}
	b.keys = b.keys[:from]
	b.sc.scan(s)
	start := int32(0)
	for _, end := range b.sc.ends {
		tok := b.sc.out[start:end]
		start = end
		key := packedKey{}
		if len(tok) <= maxPacked {
			key = packBytes(tok)
		} else {
			at := len(b.long)
			b.long = append(b.long, tok...)
			key = longKey(at, len(b.long))
		}
		key.hi |= tag
		b.keys = append(b.keys, key)
	}
	return keySpan{from, len(b.keys)}
}

// again counts the keys of an earlier field once more, with another weight, by adding
// the weight to theirs rather than appending them: a term's frequency is the sum of
// its weights, and the field's terms already occur where they first occur, so the
// document comes out the same with a third fewer keys to look up (a label and a tool
// name mostly repeat the name).
func (b *corpusBuilder) again(f keySpan, weight uint64) {
	for k := f.from; k < f.to; k++ {
		b.keys[k].hi += weight << weightShift
	}
}

// The weights again adds up must fit the four bits of a key's weight.
const _ = uint(1<<(64-weightShift) - 1 - (weightName + weightLabel + weightMCPToolName))

// add adds the terms of the document's keys, each occurrence its weight to its
// frequency.
func (b *corpusBuilder) add() {
	if cap(b.terms)-len(b.terms) < len(b.keys) { // room for every key to be new
		b.terms = slices.Grow(b.terms, len(b.keys))
	}
	for k := 0; ; k++ {
		if k = b.addFound(k); k == len(b.keys) {
			return
		}
		key := b.keys[k]
		w := uint32(key.hi >> weightShift)
		key.hi &= keyBits
		id, e := b.slowID(key)
		b.addTerm(e, id, w)
	}
}

// addFound adds the terms of keys[from:] while the table's first probe finds them,
// and returns where it stopped. It calls nothing and does not
// branch on whether a term is new to the document, so that its loop keeps its variables
// in registers and the CPU does not guess wrong half the time: a term's entry is written
// at the end of the document's terms every time and kept only when the term is new.
// The caller has made room for every key.
func (b *corpusBuilder) addFound(from int) int {
	tab, shift := b.tab, b.tabShift&63
	mul0, mul1 := b.dict.mul[0], b.dict.mul[1]
	n, terms := int32(len(b.terms)), b.terms[:cap(b.terms)]
	start := b.from
	keys := b.keys
	k := from
	for ; k < len(keys); k++ {
		key := keys[k]
		w := uint32(key.hi >> weightShift)
		key.hi &= keyBits
		e := &tab[mixHash(key.lo*mul0+key.hi*mul1)>>shift]
		if e.key != key {
			break
		}
		at := e.at
		old := (start - 1 - at) >> 31 // -1 if the document has the term at at, else 0; no branch
		at = at&old | n&^old
		terms[n] = docTerm{id: e.id}
		terms[at].freq += w
		e.at = at
		n += 1 + old
	}
	b.terms = b.terms[:n] // the length alone: no pointer write for the GC to see
	return k
}

// addTerm adds an occurrence of term id at the end of the document's terms if its place
// *at (-1 for none) is not in the document.
func (b *corpusBuilder) addTerm(at *int32, id int32, weight uint32) {
	if *at >= b.from {
		b.terms[*at].freq += weight
		return
	}
	*at = int32(len(b.terms))
	b.terms = append(b.terms, docTerm{id: id, freq: weight})
}

// slowID is the id of key past the first probe (a collision, a new term or a long one),
// which it adds if it is new, and where its place in the document is kept.
func (b *corpusBuilder) slowID(key packedKey) (int32, *int32) {
	if isLong(key) {
		id := b.dict.longID(b.long[uint32(key.lo) : key.lo>>32])
		j := int(b.dict.keys[id].lo)
		if j >= len(b.seenLong) {
			for len(b.seenLong) <= j {
				b.seenLong = append(b.seenLong, -1)
			}
		}
		return id, &b.seenLong[j]
	}
	mask := uint64(len(b.tab) - 1)
	i := mixHash(key.lo*b.dict.mul[0]+key.hi*b.dict.mul[1]) >> (b.tabShift & 63)
	for {
		e := &b.tab[i]
		if e.key == key {
			return e.id, &e.at
		}
		if e.key.hi == 0 {
			break
		}
		i = (i + 1) & mask
	}
	d := b.dict
	var id int32
	if b.cached {
		id = d.id(key)
	} else {
		id = int32(len(d.keys))
		d.keys = append(d.keys, key)
	}
	b.tab[i] = builderSlot{key: key, id: id, at: -1}
	if b.tabLen++; 2*b.tabLen > len(b.tab) { // at most half full: probes stay short
		b.growTable()
		return id, b.slotAt(key)
	}
	return id, &b.tab[i].at
}

// growTable doubles b.tab, moving every term with its place in the document.
func (b *corpusBuilder) growTable() {
	old := b.tab
	b.tab = make([]builderSlot, 2*len(old))
	b.tabShift--
	mask := uint64(len(b.tab) - 1)
	for _, e := range old {
		if e.key.hi == 0 {
			continue
		}
		i := mixHash(e.key.lo*b.dict.mul[0]+e.key.hi*b.dict.mul[1]) >> (b.tabShift & 63)
		for b.tab[i].key.hi != 0 {
			i = (i + 1) & mask
		}
		b.tab[i] = e
	}
}

// slotAt is the place in the document of a short term that b.tab holds.
func (b *corpusBuilder) slotAt(key packedKey) *int32 {
	mask := uint64(len(b.tab) - 1)
	i := mixHash(key.lo*b.dict.mul[0]+key.hi*b.dict.mul[1]) >> (b.tabShift & 63)
	for b.tab[i].key != key {
		i = (i + 1) & mask
	}
	return &b.tab[i].at
}
