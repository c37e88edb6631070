package search

import (
	"math"
	"runtime"
	"slices"
	"sync"
)

// RankDoc is one catalog entry as the Tool Search ranker sees it. ParamText is the text
// of the input schema (SchemaText builds it); SchemaKeys are its top-level property names.
// ToolName is the tool's name without the server prefix its model-facing Name may carry
// (the MCP tool name of mcp__server__tool); empty when Name has none. The reference
// ranker ignores it. Source is carried for the caller, who decides from it what goes
// into ParamText; no ranker reads it.
type RankDoc struct {
	ID          string
	Name        string
	ToolName    string
	Label       string
	Description string
	Server      string
	Source      string
	SchemaKeys  []string
	ParamText   string
}

// RankerOptions selects the ranking algorithm.
type RankerOptions struct {
	// Reference runs the reference Tool Search ranker unchanged: one bag of words from
	// name, id, label, description and ParamText, the reference stop words, stemmer and
	// expansions, Okapi BM25. The reference indexed parameter text of first-party tools
	// only; here the caller decides by what it puts in ParamText.
	Reference bool
}

// Ranker ranks catalog entries for Tool Search queries. It is immutable after
// NewRanker and safe for concurrent use; it keeps docs, which the caller must not
// modify afterwards.
//
// Search puts exact requests first: an entry whose id is the trimmed query, else every
// entry whose name or id equals it case-insensitively (and, outside reference mode, whose
// name's tail after the last "__" does). Then come BM25 hits by score (in reference mode
// those matching one of the query's own words before those reached only through
// expansions), then by id in byte order: the reference used localeCompare, which
// depends on the locale.
type Ranker struct {
	docs []RankDoc
	an   analyzer
	// Exact requests: documents by id, and by lowercased name, id and (outside
	// reference mode) name tail, each in document order.
	exact *exactIndex
	terms termTable
	// Postings of term t are post[start[t]:start[t+1]] (documents, ascending) with
	// frequencies freq[…]; in BM25F the frequencies are already field-normalized.
	start       []int32
	post        []int32
	freq        []float64
	norm        []float64 // per document: k1·(1 − b + b·len/avgLen), or k1 in BM25F
	k1          float64
	literalTier bool
	scratch     sync.Pool // *rankScratch

	// The analysis of every document, kept for Update: document i's cells are
	// cells[i] (read-only, shared with the rankers updated from this one), its field
	// lengths lens[i·fields:]. deadTerms counts the ids no document uses any more, left
	// by updates.
	cells     [][]termCell
	lens      []float64
	deadTerms int
	opts      RankerOptions
	// analyzed is how many documents the build analyzed rather than carried from the
	// ranker it updated, so that a test can tell an update that reuses from one that
	// only gives the same answers.
	analyzed int
}

// analyzer turns documents and queries into terms; the reference and nodmix's ranker
// differ only here and in their parameters. An analyzer is used by one goroutine while
// the ranker is built, and concurrently by searches afterwards, when it must only read.
type analyzer interface {
	// prepare sees the whole corpus before any docTerms call, and how many of its
	// documents will be analyzed (the others are carried).
	prepare(docs []RankDoc, fresh int)
	// fields lists the scoring parameters of the fields docTerms emits, in order.
	fields() []fieldSpec
	// docTerms emits every term occurrence of doc with its field and weight.
	docTerms(doc *RankDoc, emit func(field int, term string, weight float64))
	// freeze ends the build.
	freeze()
	// carry takes the next document's analysis from prev, the analyzer of the ranker
	// being updated, where it was document doc: docTerms is not called for it.
	carry(prev analyzer, doc int)
	// successor returns the analyzer of an update of this analyzer's ranker.
	successor() analyzer
	queryTerms(query string) []weightedTerm
	k1() float64
	// classic scores a single field with Okapi BM25 exactly as the reference writes it;
	// otherwise fields combine as in BM25F.
	classic() bool
	tailMatch() bool
	// literalTier ranks documents that match one of the query's own words above those
	// reached only through expansions.
	literalTier() bool
}

var (
	_ analyzer = referenceAnalyzer{}
	_ analyzer = (*nodmixAnalyzer)(nil)
)

// idAnalyzer is an analyzer that interns terms itself, which lets it cache the ids of
// the words it has seen: docTermIDs must emit exactly the ids of docTerms' terms.
type idAnalyzer interface {
	docTermIDs(doc *RankDoc, intern func(string) int32, acc *docAccum)
}

// termCounts is a term of the document being analyzed with its count in every field: a
// sum of weights of 1 and 0.5, exact in float32 (as termCell keeps it) below 2^23 words.
type termCounts struct {
	term   int32
	fields uint8 // the fields with a count, as bits
	counts [maxFields]float32
}

// docAccum accumulates one document's term counts by field, in order of first
// occurrence, and its field lengths.
type docAccum struct {
	slot []int32 // slot[t]: position of term t in acc, offset by one; zero when absent
	acc  []termCounts
	lens []float64 // the document's field lengths
}

func (d *docAccum) add(f int, id int32, w float64) {
	k := d.slot[id]
	if k == 0 {
		d.acc = append(d.acc, termCounts{term: id})
		k = int32(len(d.acc))
		d.slot[id] = k
	}
	tc := &d.acc[k-1]
	tc.counts[f] += float32(w)
	if tc.counts[f] != 0 {
		tc.fields |= 1 << f
	}
	d.lens[f] += w
}

var _ idAnalyzer = (*nodmixAnalyzer)(nil)

// fieldSpec weighs a field and sets its length normalization.
type fieldSpec struct {
	weight, b float64
}

// NewRanker indexes docs; hit indices are positions in docs.
func NewRanker(docs []RankDoc, opts RankerOptions) *Ranker {
	var r *Ranker
	if opts.Reference {
		r = newRanker(docs, referenceAnalyzer{})
	} else {
		r = newRanker(docs, newNodmixAnalyzer())
	}
	r.opts = opts
	return r
}

// Len is the number of indexed documents.
func (r *Ranker) Len() int { return len(r.docs) }

type rankScratch struct {
	scores  []float64 // by document; zero outside touched
	literal []bool
	touched []int32
	cands   []rankCandidate
}

type rankCandidate struct {
	doc     int32
	exact   bool
	literal bool
	score   float64
}

// Search returns at most limit hits (all when limit < 1) for query among the documents
// allow accepts (all when allow is nil). The filter runs before the limit, so denied
// tools never appear and never take a place. Exact matches that no query term reaches
// (a tool named after a stop word) come first with score 0. A query with no usable
// terms and no exact match returns nil, never the whole catalog.
func (r *Ranker) Search(query string, limit int, allow func(i int) bool) []Hit {
	s := r.scratch.Get().(*rankScratch)
	defer r.scratch.Put(s)
	visible := func(i int) bool { return allow == nil || allow(i) }
	exact := r.exactMatches(jsTrim(query), visible)

	n := float64(len(r.docs))
	k1p1 := r.k1 + 1
	s.touched = s.touched[:0]
	for _, q := range r.an.queryTerms(query) {
		id, ok := r.terms.find(q.term)
		if !ok {
			continue
		}
		lo, hi := r.start[id], r.start[id+1]
		df := float64(hi - lo)
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for j := lo; j < hi; j++ {
			d := r.post[j]
			tf := r.freq[j]
			if s.scores[d] == 0 {
				s.touched = append(s.touched, d)
			}
			if q.weight >= 1 {
				s.literal[d] = true
			}
			s.scores[d] += (q.weight * (idf * (tf * k1p1))) / (tf + r.norm[d])
		}
	}
	s.cands = s.cands[:0]
	rankedExact := 0
	for _, d := range s.touched {
		score, literal := s.scores[d], s.literal[d]
		s.scores[d], s.literal[d] = 0, false
		if score > 0 && visible(int(d)) {
			isExact := slices.Contains(exact, d)
			if isExact {
				rankedExact++
			}
			s.cands = append(s.cands, rankCandidate{doc: d, literal: literal, score: score, exact: isExact})
		}
	}

	// Exact matches no term reached come first, in document order.
	var hits []Hit
	if rankedExact < len(exact) {
		for _, d := range exact {
			if !slices.ContainsFunc(s.cands, func(c rankCandidate) bool { return c.doc == d }) {
				hits = append(hits, Hit{Index: int(d)})
			}
		}
	}
	rest := 0 // no limit
	if limit >= 1 {
		if len(hits) >= limit {
			return hits[:limit]
		}
		rest = limit - len(hits)
	}
	for _, c := range selectTop(s.cands, rest, r.less) {
		hits = append(hits, Hit{Index: int(c.doc), Score: c.score})
	}
	return hits
}

// exactMatches lists, in document order, the visible documents the query names exactly.
func (r *Ranker) exactMatches(trimmed string, visible func(int) bool) []int32 {
	if trimmed == "" {
		return nil
	}
	for d := range r.exact.idDocs(trimmed) {
		if visible(int(d)) {
			return []int32{d}
		}
	}
	var out []int32
	for d := range r.exact.lowerDocs(jsLower(trimmed)) {
		if visible(int(d)) {
			out = append(out, d)
		}
	}
	return out
}

// less orders candidates best first.
func (r *Ranker) less(a, b rankCandidate) bool {
	switch {
	case a.exact != b.exact:
		return a.exact
	case r.literalTier && a.literal != b.literal:
		return a.literal
	case a.score != b.score:
		return a.score > b.score
	}
	if a, b := r.docs[a.doc].ID, r.docs[b.doc].ID; a != b {
		return a < b
	}
	return a.doc < b.doc
}

// maxFields bounds an analyzer's field count.
const maxFields = 8

// Compile-time check: nodmix's fields fit.
var _ [maxFields - numFields]struct{}

// newRanker builds the inverted index in two passes: the first analyzes every
// document into per-document term counts by field (and field lengths), the second,
// once the average field lengths are known, turns them into postings.
func newRanker(docs []RankDoc, an analyzer) *Ranker {
	return buildRanker(docs, an, nil, nil, runtime.GOMAXPROCS(0))
}

// termCell is one term of a document with its count in one field; a document's cells
// are grouped by term. The term id and the field share a word: a large index holds
// hundreds of thousands of cells.
type termCell struct {
	termField uint32  // term id << cellFieldBits | field
	count     float32 // a sum of small weights: exact in float32
}

// cellFieldBits holds a field number below maxFields; term ids keep the other 29 bits,
// far more terms than any catalog a process can hold in memory has.
const cellFieldBits = 3

// Compile-time check: the fields fit.
var _ [1<<cellFieldBits - maxFields]struct{}

func newCell(term int32, field int, count float32) termCell {
	return termCell{termField: uint32(term)<<cellFieldBits | uint32(field), count: count}
}

func (c termCell) term() int32 { return int32(c.termField >> cellFieldBits) }
func (c termCell) field() int  { return int(c.termField & (1<<cellFieldBits - 1)) }

// buildRanker is newRanker; with prev, every document whose reuse entry is not -1 is
// prev's document of that index, unchanged, and its analysis is taken from prev
// instead of being redone. Term ids then continue prev's. A build without prev
// analyzes its documents on up to workers goroutines; the ranker is the same whatever
// their number.
func buildRanker(docs []RankDoc, an analyzer, prev *Ranker, reuse []int32, workers int) *Ranker {
	specs := an.fields()
	nf := len(specs)
	r := &Ranker{
		docs:        docs,
		an:          an,
		norm:        make([]float64, len(docs)),
		k1:          an.k1(),
		literalTier: an.literalTier(),
	}
	cells := make([][]termCell, len(docs))
	lens := make([]float64, len(docs)*nf)
	// The exact-request tables depend only on ids and names by position: an update
	// that keeps every one in place shares its predecessor's (they are only read).
	// A parallel build makes them, and later freezes the analyzer, on goroutines of
	// their own while it goes on.
	var wg sync.WaitGroup
	defer wg.Wait()
	parts := rankParts(docs, an, prev, workers)
	tails := an.tailMatch()
	switch {
	case prev != nil && sameNames(prev.docs, docs):
		r.exact = prev.exact
	case len(parts) > 1:
		wg.Go(func() { r.exact = newExactIndex(docs, tails) })
	default:
		r.exact = newExactIndex(docs, tails)
	}
	var counts [][]int32
	if len(parts) > 1 {
		r.terms, counts = analyzeParallel(docs, an, parts, cells, lens, nf)
		r.analyzed = len(docs)
	} else {
		if prev != nil {
			r.terms = prev.terms.clone()
		} else {
			r.terms = newTermTable(4 * len(docs))
		}
		fresh := len(docs)
		for _, j := range reuse {
			if j >= 0 {
				fresh--
			}
		}
		r.analyzed = fresh
		an.prepare(docs, fresh)
		analyzeRange(docs, 0, len(docs), an, &r.terms, prev, reuse, cells, lens, nf)
	}
	totals := make([]float64, nf)
	for i := range docs {
		for f := range nf {
			totals[f] += lens[i*nf+f]
		}
	}
	classic := an.classic()
	if len(parts) > 1 {
		wg.Go(an.freeze)
	} else {
		an.freeze()
	}
	r.cells, r.lens = cells, lens

	avg := make([]float64, nf)
	for f := range avg {
		if len(docs) > 0 {
			avg[f] = totals[f] / float64(len(docs))
		}
	}
	// normalized is a field's length over its average, 1 when the average is 0 as in
	// the reference.
	normalized := func(i, f int) float64 {
		if avg[f] > 0 {
			return lens[i*nf+f] / avg[f]
		}
		return 1
	}
	ranges := [][2]int{{0, len(docs)}}
	if len(parts) > 1 {
		ranges = ranges[:0]
		for _, p := range parts {
			ranges = append(ranges, [2]int{p.lo, p.hi})
		}
	}
	r.postings(cells, ranges, counts, specs, classic, func(i int) (den [maxFields]float64) {
		if classic {
			b := specs[0].b
			r.norm[i] = r.k1 * ((1 - b) + float64(b*normalized(i, 0)))
			return den
		}
		r.norm[i] = r.k1
		for f, spec := range specs {
			den[f] = (1 - spec.b) + spec.b*normalized(i, f)
		}
		return den
	})
	r.scratch.New = func() any {
		return &rankScratch{scores: make([]float64, len(docs)), literal: make([]bool, len(docs))}
	}
	return r
}

// sameNames reports whether a and b have the same ids and names at every position.
func sameNames(a, b []RankDoc) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// referenceAnalyzer is the reference ranker's text model.
type referenceAnalyzer struct{}

func (referenceAnalyzer) fields() []fieldSpec    { return []fieldSpec{{weight: 1, b: 0.75}} }
func (referenceAnalyzer) k1() float64            { return 1.2 }
func (referenceAnalyzer) classic() bool          { return true }
func (referenceAnalyzer) tailMatch() bool        { return false }
func (referenceAnalyzer) prepare([]RankDoc, int) {}
func (referenceAnalyzer) freeze()                {}
func (referenceAnalyzer) carry(analyzer, int)    {}
func (a referenceAnalyzer) successor() analyzer  { return a }
func (referenceAnalyzer) literalTier() bool      { return true }

func (referenceAnalyzer) docTerms(d *RankDoc, emit func(int, string, float64)) {
	var terms, words []string
	var buf []rune
	for _, f := range [...]string{d.Name, d.ID, d.Label, d.Description, d.ParamText} {
		terms = refDocumentTerms(terms[:0], f, &words, &buf)
		for _, t := range terms {
			emit(0, t, 1)
		}
	}
}

func (referenceAnalyzer) queryTerms(query string) []weightedTerm {
	return refQueryTerms(query)
}
