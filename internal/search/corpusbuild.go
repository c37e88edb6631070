package search

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
	// fieldIDs holds the term ids of this document's fields, which often repeat (the
	// label defaults to the name); fields spans them.
	fieldIDs []int32
	fields   []fieldSpan
	tok      []byte // a long term, lowercased
	sink     byte   // keeps touchDoc's reads
}

type docSlot struct {
	doc, at int32
}

type fieldSpan struct {
	s        string
	from, to int
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
	b.fieldIDs = b.fieldIDs[:0]
	b.fields = b.fields[:0]
	var length uint32
	length += b.addField(d.Name, weightName)
	length += b.addField(d.Label, weightLabel)
	length += b.addField(d.ServerName, weightServerName)
	length += b.addField(d.MCPToolName, weightMCPToolName)
	length += b.addField(d.Summary, weightSummary)
	for _, k := range d.SchemaKeys {
		length += b.addField(k, weightSchemaKey)
	}
	return length
}

// addField adds a field's terms.
func (b *corpusBuilder) addField(s string, weight uint32) uint32 {
	if s == "" {
		return 0
	}
	ids := b.fieldTermIDs(s)
	terms, seen, doc := b.terms, b.seen, b.doc
	for _, id := range ids {
		e := &seen[id]
		if e.doc == doc {
			terms[e.at].freq += weight
			continue
		}
		e.doc, e.at = doc, int32(len(terms))
		terms = append(terms, docTerm{id: id, freq: weight})
	}
	b.terms = terms
	return weight * uint32(len(ids))
}

func (b *corpusBuilder) fieldTermIDs(s string) []int32 {
	for _, f := range b.fields {
		if f.s == s {
			return b.fieldIDs[f.from:f.to]
		}
	}
	from := len(b.fieldIDs)
	if !b.asciiTermIDs(s) {
		b.fieldIDs = b.fieldIDs[:from]
		b.sc.scan(s)
		start := int32(0)
		for _, end := range b.sc.ends {
			b.fieldIDs = append(b.fieldIDs, b.dict.termID(b.sc.out[start:end]))
			start = end
		}
	}
	if n := b.dict.Len(); n > len(b.seen) {
		b.seen = append(b.seen, make([]docSlot, max(n, 2*len(b.seen))-len(b.seen))...)
	}
	b.fields = append(b.fields, fieldSpan{s: s, from: from, to: len(b.fieldIDs)})
	return b.fieldIDs[from:]
}
