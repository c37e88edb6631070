package search

import "sync"

// A fresh build of a large catalog analyzes its documents on several goroutines, one
// contiguous chunk each, every chunk with an analyzer and a term table of its own; the
// chunks' tables are then merged in chunk order. A term's id is the order in which the
// build first meets it, so merging chunk by chunk gives every term, and every word, the
// id a single pass over all documents gives it: the ranker is the same whatever the
// number of chunks.

// minPartDocs is the fewest documents worth a chunk of their own: below it, starting a
// goroutine and merging its tables cost more than the chunk's analysis.
const minPartDocs = 512

// partAnalyzer is an analyzer that can analyze a build in chunks.
type partAnalyzer interface {
	// part returns a new analyzer for one chunk of a build.
	part() analyzer
}

var (
	_ partAnalyzer = referenceAnalyzer{}
	_ partAnalyzer = (*nodmixAnalyzer)(nil)
)

// rankPart is one chunk of a parallel build: documents lo to hi.
type rankPart struct {
	lo, hi int
	an     analyzer
	terms  termTable
}

// rankParts splits docs into chunks for a build on up to workers goroutines; nil when
// the build is to run in one pass (an update, a small catalog, or one worker).
func rankParts(docs []RankDoc, an analyzer, prev *Ranker, workers int) []rankPart {
	pa, ok := an.(partAnalyzer)
	if !ok || prev != nil {
		return nil
	}
	n := min(workers, len(docs)/minPartDocs)
	if n < 2 {
		return nil
	}
	// Chunks of about equal text, which is what analysis costs.
	size := func(d *RankDoc) int {
		return 64 + len(d.Name) + len(d.ID) + len(d.Label) + len(d.Description) + len(d.ParamText)
	}
	total := 0
	for i := range docs {
		total += size(&docs[i])
	}
	parts := make([]rankPart, 0, n)
	lo, acc := 0, 0
	for i := range docs {
		acc += size(&docs[i])
		if len(parts) < n-1 && acc*n >= total*(len(parts)+1) {
			parts = append(parts, rankPart{lo: lo, hi: i + 1})
			lo = i + 1
		}
	}
	parts = append(parts, rankPart{lo: lo, hi: len(docs)})
	for k := range parts {
		parts[k].an = pa.part()
	}
	return parts
}

// analyzeParallel analyzes every chunk of docs on a goroutine of its own, merges the
// chunks' analyses into an, and returns the ranker's term table, and the postings counts
// of the chunks (as postings takes them) when it made them. cells and lens are filled as
// analyzeRange fills them.
func analyzeParallel(docs []RankDoc, an analyzer, parts []rankPart, cells [][]termCell, lens []float64, nf int) (termTable, [][]int32) {
	if a, ok := an.(*nodmixAnalyzer); ok {
		return analyzeNodmixParallel(docs, a, parts, cells, lens, nf)
	}
	var wg sync.WaitGroup
	for k := range parts {
		p := &parts[k]
		wg.Go(func() {
			chunk := docs[p.lo:p.hi]
			p.terms = newTermTable(4 * len(chunk))
			p.an.prepare(chunk, len(chunk))
			analyzeRange(chunk, 0, len(chunk), p.an, &p.terms, nil, nil, cells[p.lo:p.hi], lens[p.lo*nf:p.hi*nf], nf)
		})
	}
	wg.Wait()

	// The first chunk's ids are the ranker's; every later chunk's terms are interned
	// after, in the order that chunk met them.
	terms := parts[0].terms
	for k := 1; k < len(parts); k++ {
		p := &parts[k]
		remap := make([]int32, p.terms.len())
		for id, term := range p.terms.strs {
			remap[id], _ = terms.intern(term)
		}
		// The chunk's cells take the ranker's ids while the next chunks are merged.
		wg.Go(func() {
			for i := p.lo; i < p.hi; i++ {
				for j, c := range cells[i] {
					cells[i][j] = newCell(remap[c.term()], c.field(), c.count)
				}
			}
		})
	}
	wg.Wait()
	return terms, nil
}

// analyzeRange analyzes docs[lo:hi] with an, interning terms in terms: cells[i] is
// document i's term cells and lens[i·nf:] its field lengths. With prev, a document whose
// reuse entry is not -1 is carried from prev.
func analyzeRange(docs []RankDoc, lo, hi int, an analyzer, terms *termTable, prev *Ranker, reuse []int32, cells [][]termCell, lens []float64, nf int) {
	fresh := hi - lo
	for _, j := range reuse[lo:min(hi, len(reuse))] {
		if j >= 0 {
			fresh--
		}
	}
	// A document's terms accumulate in acc (a term with its count in every field),
	// then go to flat as one cell per term and field, grouped by term; cells[i] is the
	// document's part of flat, or the cells of the document it is in prev.
	var acc docAccum
	flat := make([]termCell, 0, 48*fresh)
	acc.slot = make([]int32, terms.len())
	intern := func(term string) int32 {
		id, added := terms.intern(term)
		if added {
			acc.slot = append(acc.slot, 0)
		}
		return id
	}
	ian, _ := an.(idAnalyzer)
	for i := lo; i < hi; i++ {
		d := &docs[i]
		docLens := lens[i*nf : (i+1)*nf]
		if reuse != nil && reuse[i] >= 0 {
			j := int(reuse[i])
			cells[i] = prev.cells[j]
			copy(docLens, prev.lens[j*nf:(j+1)*nf])
			an.carry(prev.an, j)
			continue
		}
		acc.acc = acc.acc[:0]
		acc.lens = docLens
		if ian != nil {
			ian.docTermIDs(d, intern, &acc)
		} else {
			an.docTerms(d, func(f int, term string, w float64) { acc.add(f, intern(term), w) })
		}
		from := len(flat)
		flat = acc.appendCells(flat)
		// If flat grows later, this slice keeps the array it is in.
		cells[i] = flat[from:len(flat):len(flat)]
	}
}

func (a referenceAnalyzer) part() analyzer { return a }

func (a *nodmixAnalyzer) part() analyzer { return newNodmixAnalyzer() }

// cached returns the cached analysis of raw, or nil.
func (a *nodmixAnalyzer) cached(raw string) *wordInfo {
	if key, short := packWord(raw); short {
		if id := a.short.find(key); id >= 0 {
			return a.list[id]
		}
		return nil
	}
	return a.words.find(a.words.hash(raw), raw)
}

// cache adds info, which cached does not find, to the word cache.
func (a *nodmixAnalyzer) cache(info *wordInfo) {
	if key, short := packWord(info.raw); short {
		a.short.insert(key, info.id)
	} else {
		a.words.insert(a.words.hash(info.raw), info)
	}
}

// postings fills r's postings from the documents' cells, each range of documents on a
// goroutine of its own when there are several: a term's postings are counted by range,
// and each range fills its place in them. counts, when not nil, are those counts, which
// the analysis made: counts[k][t] is how many documents of range k have term t. doc sets
// document i's norm and, outside classic BM25, the normalization den of each of its
// fields, which weighs its cells.
func (r *Ranker) postings(cells [][]termCell, ranges [][2]int, counts [][]int32, specs []fieldSpec, classic bool,
	doc func(i int) (den [maxFields]float64)) {
	run := func(each func(k int)) {
		if len(ranges) == 1 {
			each(0)
			return
		}
		var wg sync.WaitGroup
		for k := range ranges {
			wg.Go(func() { each(k) })
		}
		wg.Wait()
	}
	nt := r.terms.len()
	// next[k][t] counts the postings of term t in range k, then is where the next goes.
	next := counts
	if next == nil {
		next = make([][]int32, len(ranges))
		run(func(k int) {
			n := make([]int32, nt)
			for _, cells := range cells[ranges[k][0]:ranges[k][1]] {
				for j, c := range cells {
					if j == 0 || cells[j-1].term() != c.term() {
						n[c.term()]++
					}
				}
			}
			next[k] = n
		})
	}
	r.start = make([]int32, nt+1)
	for t := range nt {
		at := r.start[t]
		for _, n := range next {
			at, n[t] = at+n[t], at
		}
		if at == r.start[t] {
			r.deadTerms++
		}
		r.start[t+1] = at
	}
	r.post = make([]int32, r.start[nt])
	r.freq = make([]float64, r.start[nt])
	run(func(k int) {
		next := next[k]
		for i := ranges[k][0]; i < ranges[k][1]; i++ {
			den := doc(i)
			cells := cells[i]
			for j := 0; j < len(cells); {
				term := cells[j].term()
				freq := 0.0
				for ; j < len(cells) && cells[j].term() == term; j++ {
					c := cells[j]
					if classic {
						freq += float64(c.count)
						continue
					}
					f := c.field()
					freq += specs[f].weight * float64(c.count) / den[f]
				}
				at := next[term]
				next[term]++
				r.post[at] = int32(i)
				r.freq[at] = freq
			}
		}
	})
}
