package search

import (
	"errors"
	"fmt"
	"math"
	"runtime"
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

// BM25 is the seed's BM25+ index over a subset of a corpus: an inverted index whose
// statistics (N, document frequencies, average length) are those of the subset, as the
// seed computes them over its filtered corpus. A BM25 is immutable and safe for
// concurrent searches.
type BM25 struct {
	corpus *Corpus
	docs   []int32   // position → corpus index
	norm   []float64 // position → k1·(1 − b + b·len/avgLen)
	avgLen float64
	// Postings of term t are post[start[t]:start[t+1]], positions ascending.
	start []int32
	post  []posting
	// Runtime copies of the constants: JavaScript evaluates k1+1 and 1−b in float64
	// at run time, and Go constant arithmetic is exact; keeping them as fields makes
	// Go do the same float64 operations.
	k1, b, delta float64
	scratch      sync.Pool // *bm25Scratch
}

// posting is a document's position in the index with its weighted frequency of a term.
type posting struct {
	pos  int32
	freq uint32
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
	ix.build(runtime.GOMAXPROCS(0))
	return ix, nil
}

// build fills the postings of ix.docs on at most procs goroutines. The positions are
// cut into contiguous chunks: each goroutine counts its chunk's postings of every term,
// the counts become each chunk's first slot in every term's postings, and each goroutine
// places its chunk's postings there. A term's postings come out in position order
// whatever the number of chunks, and lengths are summed as integers, which float64
// holds exactly, so that the index does not depend on procs (TestIndexWorkersAgree).
func (ix *BM25) build(procs int) {
	c := ix.corpus
	workers := max(1, min(procs, len(ix.docs)/minDocsPerWorker))
	cut := make([]int, workers+1)
	for w := range cut {
		cut[w] = w * len(ix.docs) / workers
	}
	// counts[w][t] is how many of chunk w's documents have term t; totals[w] is the
	// chunk's summed length.
	counts := make([][]int32, workers)
	totals := make([]uint64, workers)
	each := func(f func(w int)) {
		var wg sync.WaitGroup
		for w := 1; w < workers; w++ {
			wg.Go(func() { f(w) })
		}
		f(0)
		wg.Wait()
	}
	// An index of every document has a posting for each of the corpus's terms: on
	// several goroutines, their array is allocated, and cleared, while the chunks are
	// counted rather than after.
	var alloc sync.WaitGroup
	if workers > 1 && len(ix.docs) == len(c.docs) {
		alloc.Go(func() { ix.post = make([]posting, len(c.terms)) })
	}
	each(func(w int) { counts[w], totals[w] = ix.count(cut[w], cut[w+1]) })
	alloc.Wait()
	var total uint64
	for _, t := range totals {
		total += t
	}
	// The seed: averageLength = sum/N || 1, which also maps 0 and NaN to 1.
	ix.avgLen = float64(total) / float64(len(ix.docs))
	if ix.avgLen == 0 || math.IsNaN(ix.avgLen) {
		ix.avgLen = 1
	}
	ix.start = make([]int32, c.dict.Len()+1)
	for t := range c.dict.Len() {
		at := ix.start[t]
		for _, cnt := range counts {
			at, cnt[t] = at+cnt[t], at // the chunk's cursor in term t's postings
		}
		ix.start[t+1] = at
	}
	if ix.post == nil {
		ix.post = make([]posting, ix.start[len(ix.start)-1])
	}
	ix.norm = make([]float64, len(ix.docs))
	each(func(w int) { ix.place(cut[w], cut[w+1], counts[w]) })
	ix.scratch.New = func() any { return &bm25Scratch{scores: make([]float64, len(ix.docs))} }
}

// count counts the postings of every term in the documents at positions lo to hi, and
// sums their lengths.
func (ix *BM25) count(lo, hi int) ([]int32, uint64) {
	c := ix.corpus
	counts := make([]int32, c.dict.Len())
	var total uint64
	for _, d := range ix.docs[lo:hi] {
		total += uint64(c.lens[d])
		for _, t := range c.terms[c.start[d]:c.start[d+1]] {
			counts[t.id]++
		}
	}
	return counts, total
}

// place writes the postings of the documents at positions lo to hi, each term's at its
// cursor in next, and their length norms.
func (ix *BM25) place(lo, hi int, next []int32) {
	c, post, norm := ix.corpus, ix.post, ix.norm
	k1, b, avgLen := ix.k1, ix.b, ix.avgLen
	for p := lo; p < hi; p++ {
		d := ix.docs[p]
		for _, t := range c.terms[c.start[d]:c.start[d+1]] {
			post[next[t.id]] = posting{pos: int32(p), freq: t.freq}
			next[t.id]++
		}
		ratio := float64(c.lens[d]) / avgLen
		norm[p] = k1 * ((1 - b) + float64(b*ratio))
	}
}

// Corpus is the corpus the index was built from.
func (ix *BM25) Corpus() *Corpus { return ix.corpus }

// Len is the number of indexed documents.
func (ix *BM25) Len() int { return len(ix.docs) }

// AvgLen is the seed's averageLength of the indexed documents.
func (ix *BM25) AvgLen() float64 { return ix.avgLen }

// DocFreq is the number of indexed documents that contain term.
func (ix *BM25) DocFreq(term string) int {
	t, ok := ix.corpus.dict.lookup([]byte(term))
	if !ok {
		return 0
	}
	return int(ix.start[t+1] - ix.start[t])
}

// bm25Scratch is one search's working memory; the pool hands each to one goroutine.
type bm25Scratch struct {
	sc     tokenScanner
	qterms []queryTerm
	// slot[t] is 1 + the position of term t in qterms while indexed, else 0 (queryTermAt).
	slot    []int32
	indexed bool
	scores  []float64 // by position; zero outside touched
	touched []int32
	cands   []candidate
}

// queryIndexFrom is how many distinct terms a query's terms are scanned for before they are
// found through bm25Scratch.slot: a query is as long as its caller makes it, and a scan per
// token would cost its length times its distinct terms.
const queryIndexFrom = 64

// queryTermAt returns the position of term id in s.qterms, or -1. nterms is the index's number
// of terms, the length slot needs.
func (s *bm25Scratch) queryTermAt(id int32, nterms int) int {
	if len(s.qterms) < queryIndexFrom {
		for k := range s.qterms {
			if s.qterms[k].id == id {
				return k
			}
		}
		return -1
	}
	if !s.indexed {
		if len(s.slot) < nterms {
			s.slot = make([]int32, nterms)
		}
		for k, q := range s.qterms {
			s.slot[q.id] = int32(k) + 1
		}
		s.indexed = true
	}
	return int(s.slot[id]) - 1
}

// addQueryTerm appends a term that is not in s.qterms yet.
func (s *bm25Scratch) addQueryTerm(id int32) {
	s.qterms = append(s.qterms, queryTerm{id: id, count: 1})
	if s.indexed {
		s.slot[id] = int32(len(s.qterms))
	}
}

// unindexQueryTerms leaves slot all zero again for the next search.
func (s *bm25Scratch) unindexQueryTerms() {
	if !s.indexed {
		return
	}
	for _, q := range s.qterms {
		s.slot[q.id] = 0
	}
	s.indexed = false
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
		id, ok := ix.corpus.dict.lookup(tok)
		if !ok || ix.start[id] == ix.start[id+1] {
			continue // no document has it: it adds nothing anywhere
		}
		if k := s.queryTermAt(id, len(ix.start)-1); k >= 0 {
			s.qterms[k].count++
		} else {
			s.addQueryTerm(id)
		}
	}
	s.unindexQueryTerms()
	n := float64(len(ix.docs))
	k1p1 := ix.k1 + 1
	s.touched = s.touched[:0]
	for _, q := range s.qterms {
		lo, hi := ix.start[q.id], ix.start[q.id+1]
		df := float64(hi - lo)
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		qidf := float64(q.count) * idf
		for _, e := range ix.post[lo:hi] {
			p := e.pos
			tf := float64(e.freq)
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
