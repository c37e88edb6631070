package search

import "slices"

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
	// seen[i] tells where the term in slot i of the dictionary's table sits in terms
	// when its doc is the document being built, and seenLong[j] the same of long term j;
	// documents count from one, so a zero doc means never. Kept by slot rather than by
	// id, the entry is read at the same time as the slot, not after it.
	seen     []docSlot
	seenLong []docSlot
	doc      int32
	keys     []packedKey // the keys of this document's fields, which often repeat (the label defaults to the name)
	long     []byte      // this document's terms longer than maxPacked, lowercased
	sink     byte        // keeps touchDoc's reads
}

type docSlot struct {
	doc, at int32
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
	b.seen = make([]docSlot, len(b.dict.slots)) // slowID follows the table when it grows
	var sink byte
	for n := range count {
		if n+touchAhead < count {
			sink += touchDoc(doc(n + touchAhead))
		}
		b.lens = append(b.lens, b.addDoc(doc(n)))
		b.ends = append(b.ends, int32(len(b.terms)))
	}
	b.sink = sink
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
	b.doc++
	b.keys = b.keys[:0]
	b.long = b.long[:0]
	name := b.scan(d.Name, weightName)
	label := name
	if d.Label != d.Name {
		label = b.scan(d.Label, weightLabel)
	} else {
		b.again(name, weightLabel)
	}
	b.scan(d.ServerName, weightServerName)
	switch d.MCPToolName {
	case d.Name:
		b.again(name, weightMCPToolName)
	case d.Label:
		b.again(label, weightMCPToolName)
	default:
		b.scan(d.MCPToolName, weightMCPToolName)
	}
	b.scan(d.Summary, weightSummary)
	for _, k := range d.SchemaKeys {
		b.scan(k, weightSchemaKey)
	}
	return b.add()
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

// scan appends the keys of the tokens of s, weighted, to b.keys.
func (b *corpusBuilder) scan(s string, weight uint64) keySpan {
	from := len(b.keys)
	if s == "" {
		return keySpan{from, from}
	}
	tag := weight << weightShift
	b.keys = slices.Grow(b.keys, len(s))
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
// frequency, and returns the document's length.
func (b *corpusBuilder) add() uint32 {
	b.terms = slices.Grow(b.terms, len(b.keys)) // room for every key to be new
	var length uint32
	for k := 0; ; k++ {
		var l uint32
		k, l = b.addFound(k)
		length += l
		if k == len(b.keys) {
			return length
		}
		key := b.keys[k]
		w := uint32(key.hi >> weightShift)
		key.hi &= keyBits
		id, e := b.slowID(key)
		b.addTerm(e, id, w)
		length += w
	}
}

// addFound adds the terms of keys[from:] while the dictionary's first probe finds them,
// and returns where it stopped and the weights it added. It calls nothing and does not
// branch on whether a term is new to the document, so that its loop keeps its variables
// in registers and the CPU does not guess wrong half the time: a term's entry is written
// at the end of the document's terms every time and kept only when the term is new.
// The caller has made room for every key.
func (b *corpusBuilder) addFound(from int) (int, uint32) {
	slots, dkeys, shift, mul := b.dict.slots, b.dict.keys, b.dict.shift&63, b.dict.mul
	n, terms := len(b.terms), b.terms[:cap(b.terms)]
	seen, doc := b.seen, b.doc
	keys := b.keys
	var length uint32
	k := from
	for ; k < len(keys); k++ {
		key := keys[k]
		w := uint32(key.hi >> weightShift)
		key.hi &= keyBits
		i := dictHash(key, mul) >> shift
		v, e := slots[i], &seen[i]
		if v == 0 || dkeys[v-1] != key {
			break
		}
		diff := uint32(e.doc ^ doc)
		fresh := int32((diff | -diff) >> 31) // 1 if the term is new to the document, else 0; no branch
		at := e.at&^-fresh | int32(n)&-fresh
		terms[n] = docTerm{id: int32(v - 1)}
		terms[at].freq += w
		e.doc, e.at = doc, at
		n += int(fresh)
		length += w
	}
	b.terms = terms[:n]
	return k, length
}

// addTerm adds an occurrence of term id, whose entry in seen or seenLong is e.
func (b *corpusBuilder) addTerm(e *docSlot, id int32, weight uint32) {
	if e.doc == b.doc {
		b.terms[e.at].freq += weight
		return
	}
	e.doc, e.at = b.doc, int32(len(b.terms))
	b.terms = append(b.terms, docTerm{id: id, freq: weight})
}

// slowID is the id of key past the first probe (a collision, a new term or a long one),
// which it adds if it is new, and its entry in seen or seenLong.
func (b *corpusBuilder) slowID(key packedKey) (int32, *docSlot) {
	if isLong(key) {
		id := b.dict.longID(b.long[uint32(key.lo) : key.lo>>32])
		j := int(b.dict.keys[id].lo)
		if j >= len(b.seenLong) {
			b.seenLong = append(b.seenLong, make([]docSlot, j+1-len(b.seenLong))...)
		}
		return id, &b.seenLong[j]
	}
	size := len(b.dict.slots)
	id, i := b.dict.idSlot(key)
	if len(b.dict.slots) != size {
		b.reseat()
	}
	return id, &b.seen[i]
}

// reseat makes seen follow the dictionary's table, which has grown and moved every
// term: only the entries of the document being built matter, and they are its terms.
func (b *corpusBuilder) reseat() {
	b.seen = make([]docSlot, len(b.dict.slots))
	from := b.ends[len(b.ends)-1]
	for at := from; at < int32(len(b.terms)); at++ {
		key := b.dict.keys[b.terms[at].id]
		if !isLong(key) {
			b.seen[b.dict.slotOf(key)] = docSlot{doc: b.doc, at: at}
		}
	}
}
