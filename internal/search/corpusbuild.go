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
	// seen[t] tells where term t sits in terms when its doc is the document being built;
	// documents count from one, so a zero doc means never.
	seen []docSlot
	doc  int32
	keys []packedKey // the keys of this document's fields, which often repeat (the label defaults to the name)
	long []byte      // this document's terms longer than maxPacked, lowercased
	sink byte        // keeps touchDoc's reads
}

type docSlot struct {
	doc, at int32
}

// build tokenizes docs[i] for every i in which, in order, appending to terms and lens,
// which it allocates if the caller has not.
func (b *corpusBuilder) build(docs []Doc, which []int) {
	if b.terms == nil {
		b.terms = make([]docTerm, 0, estimateTerms(docs, which))
	}
	if b.lens == nil {
		b.lens = make([]uint32, 0, len(which))
	}
	b.ends = append(make([]int32, 0, len(which)+1), 0)
	b.seen = make([]docSlot, max(b.dict.Len(), minDictSlots/2)) // slowID grows it with the dictionary
	var sink byte
	for n, i := range which {
		if n+touchAhead < len(which) {
			sink += touchDoc(&docs[which[n+touchAhead]])
		}
		b.lens = append(b.lens, b.addDoc(&docs[i]))
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
	name := b.scan(d.Name)
	length := b.add(name, weightName)
	label := name
	if d.Label != d.Name {
		label = b.scan(d.Label)
	}
	length += b.add(label, weightLabel)
	length += b.add(b.scan(d.ServerName), weightServerName)
	mcp := name
	if d.MCPToolName != d.Name {
		mcp = label
		if d.MCPToolName != d.Label {
			mcp = b.scan(d.MCPToolName)
		}
	}
	length += b.add(mcp, weightMCPToolName)
	length += b.add(b.scan(d.Summary), weightSummary)
	for _, k := range d.SchemaKeys {
		length += b.add(b.scan(k), weightSchemaKey)
	}
	return length
}

// keySpan is a field's keys: keys[from:to].
type keySpan struct{ from, to int }

// scan appends the keys of the tokens of s to b.keys.
func (b *corpusBuilder) scan(s string) keySpan {
	from := len(b.keys)
	if s == "" {
		return keySpan{from, from}
	}
	b.keys = slices.Grow(b.keys, len(s))
	out := b.keys[from : from+len(s)]
	if n, ok := b.scanASCII(out, s); ok {
		b.keys = b.keys[:from+n]
		return keySpan{from, from + n}
	}
	b.sc.scan(s)
	start := int32(0)
	for _, end := range b.sc.ends {
		tok := b.sc.out[start:end]
		start = end
		if len(tok) <= maxPacked {
			b.keys = append(b.keys, packBytes(tok))
			continue
		}
		at := len(b.long)
		b.long = append(b.long, tok...)
		b.keys = append(b.keys, longKey(at, len(b.long)))
	}
	return keySpan{from, len(b.keys)}
}

// add adds the terms of a field's keys, each occurrence weight to its frequency, and
// returns the field's length.
func (b *corpusBuilder) add(f keySpan, weight uint32) uint32 {
	for k := f.from; k < f.to; k++ {
		k = b.addFound(k, f.to, weight)
		if k == f.to {
			break
		}
		b.addTerm(b.slowID(b.keys[k]), weight)
	}
	return weight * uint32(f.to-f.from)
}

// addFound adds the terms of keys[from:to] while the dictionary's first probe finds
// them, and returns where it stopped. It calls nothing, so that its loop keeps its
// variables in registers.
func (b *corpusBuilder) addFound(from, to int, weight uint32) int {
	slots, dkeys, shift := b.dict.slots, b.dict.keys, b.dict.shift&63
	terms, seen, doc := b.terms, b.seen, b.doc
	keys := b.keys[from:to]
	k := 0
	for ; k < len(keys); k++ {
		key := keys[k]
		v := slots[dictHash(key)>>shift]
		if v == 0 || dkeys[v-1] != key {
			break
		}
		e := &seen[v-1]
		if e.doc == doc {
			terms[e.at].freq += weight
			continue
		}
		n := len(terms)
		if n == cap(terms) {
			break // growing would call: leave it to the caller
		}
		e.doc, e.at = doc, int32(n)
		terms = terms[:n+1]
		terms[n] = docTerm{id: int32(v - 1), freq: weight}
	}
	b.terms = terms
	return from + k
}

// addTerm adds an occurrence of term id.
func (b *corpusBuilder) addTerm(id int32, weight uint32) {
	e := &b.seen[id]
	if e.doc == b.doc {
		b.terms[e.at].freq += weight
		return
	}
	e.doc, e.at = b.doc, int32(len(b.terms))
	b.terms = append(b.terms, docTerm{id: id, freq: weight})
}

// slowID is the id of key past the first probe: a collision, a new term or a long one.
func (b *corpusBuilder) slowID(key packedKey) int32 {
	var id int32
	if isLong(key) {
		id = b.dict.longID(b.long[uint32(key.lo) : key.lo>>32])
	} else {
		id = b.dict.id(key)
	}
	if n := b.dict.Len(); n > len(b.seen) {
		b.seen = append(b.seen, make([]docSlot, max(n, 2*len(b.seen))-len(b.seen))...)
	}
	return id
}
