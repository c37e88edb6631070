package search

import (
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"sync"
)

// ErrNoTokens is returned by BM25.Search for a query without a letter or a number. Its
// text is the seed's message verbatim (capitalised and punctuated, unlike Go errors)
// because search_tool_bm25 shows it to the model as is.
var ErrNoTokens = errors.New("Query must contain at least one letter or number.")

// Field weights of the seed: every token occurrence adds its field's weight to the
// document's term frequency for that token.
const (
	weightName        = 6
	weightLabel       = 4
	weightServerName  = 2
	weightMCPToolName = 4
	weightSummary     = 2
	weightSchemaKey   = 1
)

// BM25+ constants of the seed.
const (
	seedK1    = 1.2
	seedB     = 0.75
	seedDelta = 1.0
)

// Doc is one document of the seed's BM25+ index. Fields are indexed in this order with
// weights name 6, label 4, serverName 2, mcpToolName 4, summary 2 and 1 per schema key;
// empty fields are skipped. The caller owns the seed's defaults: Label defaults to Name,
// Summary to the first 200 UTF-16 units of the description, and SchemaKeys are the sorted
// top-level input schema property names. This package applies none of them.
type Doc struct {
	Name        string
	Label       string
	ServerName  string
	MCPToolName string
	Summary     string
	SchemaKeys  []string
}

// Hit is one ranked result: the index of a document and its score.
type Hit struct {
	Index int
	Score float64
}

// TermFreq is a term of a document with its weighted term frequency.
type TermFreq struct {
	Term string
	Freq int
}

// Corpus holds documents tokenized once, ready to be indexed in any subset. A Corpus is
// immutable after construction and safe for concurrent use; Update derives a new one.
type Corpus struct {
	terms map[string]int32 // term → id
	vocab []string         // id → term
	docs  []Doc            // kept for Update, which compares content
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

// Update returns a corpus of docs that reuses c's tokenization for every document
// whose content is unchanged, so a catalog change costs only the changed documents.
// c itself is not modified. Like NewCorpus, the new corpus keeps docs.
func (c *Corpus) Update(docs []Doc) *Corpus {
	nc := &Corpus{
		terms:   maps.Clone(c.terms),
		vocab:   slices.Clip(c.vocab),
		docs:    docs,
		start:   make([]int32, 1, len(docs)+1),
		lens:    make([]uint32, len(docs)),
		termIDs: make([]int32, 0, 24*len(docs)),
		freqs:   make([]uint32, 0, 24*len(docs)),
	}
	if nc.terms == nil {
		nc.terms = make(map[string]int32, len(docs))
	}
	// Old documents by content hash; hashing is cheap next to tokenizing, and a hash
	// match is confirmed field by field.
	var old map[uint64][]int32
	var seed maphash.Seed
	if len(c.docs) > 0 {
		seed = maphash.MakeSeed()
		old = make(map[uint64][]int32, len(c.docs))
		for j := range c.docs {
			h := hashDoc(seed, &c.docs[j])
			old[h] = append(old[h], int32(j))
		}
	}
	b := corpusBuilder{c: nc}
	for i := range docs {
		d := &docs[i]
		j := int32(-1)
		if old != nil {
			for _, cand := range old[hashDoc(seed, d)] {
				if sameDoc(&c.docs[cand], d) {
					j = cand
					break
				}
			}
		}
		if j >= 0 {
			lo, hi := c.start[j], c.start[j+1]
			nc.termIDs = append(nc.termIDs, c.termIDs[lo:hi]...)
			nc.freqs = append(nc.freqs, c.freqs[lo:hi]...)
			nc.lens[i] = c.lens[j]
		} else {
			nc.lens[i] = b.addDoc(d)
		}
		nc.start = append(nc.start, int32(len(nc.termIDs)))
	}
	return nc
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

// corpusBuilder tokenizes documents into its corpus, reusing its buffers.
type corpusBuilder struct {
	c  *Corpus
	sc tokenScanner
	// slot[t] is where term t sits in the flat arrays when slotDoc[t] is the document
	// being built; documents count from one, so a zero slotDoc means never.
	slot    []int32
	slotDoc []int32
	doc     int32
	// fieldIDs caches the term ids of this document's fields, which often repeat
	// (the label defaults to the name).
	fieldIDs []int32
	fields   []fieldSpan
	short    map[uint64]int32 // term ids of tokens of up to 7 bytes
}

type fieldSpan struct {
	s        string
	from, to int
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

func (b *corpusBuilder) addField(s string, weight uint32) uint32 {
	if s == "" {
		return 0
	}
	ids := b.fieldTermIDs(s)
	c := b.c
	for _, id := range ids {
		if b.slotDoc[id] == b.doc {
			c.freqs[b.slot[id]] += weight
			continue
		}
		b.slotDoc[id] = b.doc
		b.slot[id] = int32(len(c.termIDs))
		c.termIDs = append(c.termIDs, id)
		c.freqs = append(c.freqs, weight)
	}
	return weight * uint32(len(ids))
}

func (b *corpusBuilder) fieldTermIDs(s string) []int32 {
	for _, f := range b.fields {
		if f.s == s {
			return b.fieldIDs[f.from:f.to]
		}
	}
	from := len(b.fieldIDs)
	b.sc.scan(s)
	start := int32(0)
	for _, end := range b.sc.ends {
		id := b.termID(b.sc.out[start:end])
		start = end
		for int(id) >= len(b.slot) {
			b.slot = append(b.slot, 0)
			b.slotDoc = append(b.slotDoc, 0)
		}
		b.fieldIDs = append(b.fieldIDs, id)
	}
	b.fields = append(b.fields, fieldSpan{s: s, from: from, to: len(b.fieldIDs)})
	return b.fieldIDs[from:]
}

// termID returns the id of tok, adding it to the vocabulary if it is new. Tokens of up
// to 7 bytes, most English words, go through a map keyed by the packed bytes, which
// hashes and compares faster than one keyed by strings.
func (b *corpusBuilder) termID(tok []byte) int32 {
	var key uint64
	short := len(tok) <= 7
	if short {
		for i, c := range tok {
			key |= uint64(c) << (8 * i)
		}
		key |= uint64(len(tok)) << 56
		if id, ok := b.short[key]; ok {
			return id
		}
	}
	c := b.c
	id, ok := c.terms[string(tok)]
	if !ok {
		id = int32(len(c.vocab))
		term := string(tok)
		c.terms[term] = id
		c.vocab = append(c.vocab, term)
	}
	if short {
		if b.short == nil {
			b.short = make(map[uint64]int32, 1024)
		}
		b.short[key] = id
	}
	return id
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

// BM25 is the seed's BM25+ index over a subset of a corpus: an inverted index whose
// statistics (N, document frequencies, average length) are those of the subset, as the
// seed computes them over its filtered corpus. A BM25 is immutable and safe for
// concurrent searches.
type BM25 struct {
	corpus *Corpus
	docs   []int32   // position → corpus index
	norm   []float64 // position → k1·(1 − b + b·len/avgLen)
	avgLen float64
	// Postings of term t are post[start[t]:start[t+1]] (positions, ascending) with
	// weighted frequencies freq[start[t]:start[t+1]].
	start []int32
	post  []int32
	freq  []uint32
	// Runtime copies of the constants: JavaScript evaluates k1+1 and 1−b in float64
	// at run time, and Go constant arithmetic is exact; keeping them as fields makes
	// Go do the same float64 operations.
	k1, b, delta float64
	scratch      sync.Pool // *bm25Scratch
}

// NewBM25 indexes docs; hit indices are positions in docs.
func NewBM25(docs []Doc) *BM25 {
	ix, _ := NewCorpus(docs).Index(nil) // a nil subset cannot be invalid
	return ix
}

// Index builds a BM25+ index over the corpus documents in subset, or over all of them
// when subset is nil. Hit indices are corpus indices. Equal scores with equal names keep
// subset order, as the seed's stable sort keeps corpus order.
func (c *Corpus) Index(subset []int) (*BM25, error) {
	n := len(c.docs)
	ix := &BM25{corpus: c, k1: seedK1, b: seedB, delta: seedDelta}
	if subset == nil {
		ix.docs = make([]int32, n)
		for i := range ix.docs {
			ix.docs[i] = int32(i)
		}
	} else {
		seen := make([]bool, n)
		ix.docs = make([]int32, len(subset))
		for p, i := range subset {
			if i < 0 || i >= n {
				return nil, fmt.Errorf("subset[%d]: index %d out of range [0,%d)", p, i, n)
			}
			if seen[i] {
				return nil, fmt.Errorf("subset[%d]: index %d repeats", p, i)
			}
			seen[i] = true
			ix.docs[p] = int32(i)
		}
	}
	var total float64
	postings := 0
	counts := make([]int32, len(c.vocab)+1)
	for _, d := range ix.docs {
		total += float64(c.lens[d])
		lo, hi := c.start[d], c.start[d+1]
		postings += int(hi - lo)
		for _, t := range c.termIDs[lo:hi] {
			counts[t+1]++
		}
	}
	// The seed: averageLength = sum/N || 1, which also maps 0 and NaN to 1.
	ix.avgLen = total / float64(len(ix.docs))
	if ix.avgLen == 0 || math.IsNaN(ix.avgLen) {
		ix.avgLen = 1
	}
	for t := 1; t < len(counts); t++ {
		counts[t] += counts[t-1]
	}
	ix.start = counts
	ix.post = make([]int32, postings)
	ix.freq = make([]uint32, postings)
	next := slices.Clone(counts[:len(counts)-1])
	ix.norm = make([]float64, len(ix.docs))
	for p, d := range ix.docs {
		lo, hi := c.start[d], c.start[d+1]
		for j := lo; j < hi; j++ {
			t := c.termIDs[j]
			at := next[t]
			next[t]++
			ix.post[at] = int32(p)
			ix.freq[at] = c.freqs[j]
		}
		ratio := float64(c.lens[d]) / ix.avgLen
		ix.norm[p] = ix.k1 * ((1 - ix.b) + float64(ix.b*ratio))
	}
	ix.scratch.New = func() any { return &bm25Scratch{scores: make([]float64, len(ix.docs))} }
	return ix, nil
}

// Corpus is the corpus the index was built from.
func (ix *BM25) Corpus() *Corpus { return ix.corpus }

// Len is the number of indexed documents.
func (ix *BM25) Len() int { return len(ix.docs) }

// AvgLen is the seed's averageLength of the indexed documents.
func (ix *BM25) AvgLen() float64 { return ix.avgLen }

// DocFreq is the number of indexed documents that contain term.
func (ix *BM25) DocFreq(term string) int {
	t, ok := ix.corpus.terms[term]
	if !ok {
		return 0
	}
	return int(ix.start[t+1] - ix.start[t])
}

// bm25Scratch is one search's working memory; the pool hands each to one goroutine.
type bm25Scratch struct {
	sc      tokenScanner
	qterms  []queryTerm
	scores  []float64 // by position; zero outside touched
	touched []int32
	cands   []candidate
}

type queryTerm struct {
	id    int32
	count int
}

type candidate struct {
	pos   int32
	score float64
}

// Search ranks the indexed documents for query and returns at most limit hits (all
// matches when limit < 1), best first: score descending, then name in byte order (the
// seed used localeCompare; byte order is locale-independent and agrees with it on
// ASCII names), then subset order. A query without tokens fails with ErrNoTokens; an
// empty index returns nil after that check.
func (ix *BM25) Search(query string, limit int) ([]Hit, error) {
	return ix.SearchFunc(query, limit, nil)
}

// SearchFunc is Search restricted to the documents whose corpus index allow accepts
// (all when allow is nil). The filter runs before the limit, so excluded documents never
// take a place in the result.
func (ix *BM25) SearchFunc(query string, limit int, allow func(i int) bool) ([]Hit, error) {
	s := ix.scratch.Get().(*bm25Scratch)
	defer ix.scratch.Put(s)
	s.sc.scan(query)
	if len(s.sc.ends) == 0 {
		return nil, ErrNoTokens
	}
	if len(ix.docs) == 0 {
		return nil, nil
	}
	// Repeated query tokens count once, multiplied by their count, in order of first
	// occurrence; the per-document sum follows that order as the seed's does.
	s.qterms = s.qterms[:0]
	from := int32(0)
	for _, end := range s.sc.ends {
		tok := s.sc.out[from:end]
		from = end
		id, ok := ix.corpus.terms[string(tok)]
		if !ok || ix.start[id] == ix.start[id+1] {
			continue // no document has it: it adds nothing anywhere
		}
		seen := false
		for k := range s.qterms {
			if s.qterms[k].id == id {
				s.qterms[k].count++
				seen = true
				break
			}
		}
		if !seen {
			s.qterms = append(s.qterms, queryTerm{id: id, count: 1})
		}
	}
	n := float64(len(ix.docs))
	k1p1 := ix.k1 + 1
	s.touched = s.touched[:0]
	for _, q := range s.qterms {
		lo, hi := ix.start[q.id], ix.start[q.id+1]
		df := float64(hi - lo)
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		qidf := float64(q.count) * idf
		for j := lo; j < hi; j++ {
			p := ix.post[j]
			tf := float64(ix.freq[j])
			if s.scores[p] == 0 {
				s.touched = append(s.touched, p)
			}
			s.scores[p] += float64(qidf * ((tf*k1p1)/(tf+ix.norm[p]) + ix.delta))
		}
	}
	s.cands = s.cands[:0]
	for _, p := range s.touched {
		score := s.scores[p]
		s.scores[p] = 0
		if score > 0 && (allow == nil || allow(int(ix.docs[p]))) {
			s.cands = append(s.cands, candidate{pos: p, score: score})
		}
	}
	best := selectTop(s.cands, limit, ix.less)
	if len(best) == 0 {
		return nil, nil
	}
	hits := make([]Hit, len(best))
	for i, c := range best {
		hits[i] = Hit{Index: int(ix.docs[c.pos]), Score: c.score}
	}
	return hits, nil
}

// less orders candidates best first.
func (ix *BM25) less(a, b candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	na, nb := ix.corpus.docs[ix.docs[a.pos]].Name, ix.corpus.docs[ix.docs[b.pos]].Name
	if na != nb {
		return na < nb
	}
	return a.pos < b.pos
}

// selectTop reorders cands so that its first min(limit, len) entries are the best in
// order, and returns them (all of them, sorted, when limit < 1). Below the candidate
// count it keeps a bounded heap instead of sorting everything.
func selectTop[T any](cands []T, limit int, less func(a, b T) bool) []T {
	order := func(a, b T) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	}
	if limit < 1 || limit >= len(cands) {
		slices.SortFunc(cands, order)
		return cands
	}
	// cands[:limit] is a heap with the worst kept candidate at the root.
	worse := func(a, b T) bool { return less(b, a) }
	h := cands[:limit]
	for i := limit/2 - 1; i >= 0; i-- {
		siftDown(h, i, worse)
	}
	for _, c := range cands[limit:] {
		if less(c, h[0]) {
			h[0] = c
			siftDown(h, 0, worse)
		}
	}
	slices.SortFunc(h, order)
	return h
}

// siftDown restores the heap property below i, where above(a, b) means a belongs
// nearer the root than b.
func siftDown[T any](h []T, i int, above func(a, b T) bool) {
	for {
		top := i
		l, r := 2*i+1, 2*i+2
		if l < len(h) && above(h[l], h[top]) {
			top = l
		}
		if r < len(h) && above(h[r], h[top]) {
			top = r
		}
		if top == i {
			return
		}
		h[i], h[top] = h[top], h[i]
		i = top
	}
}
