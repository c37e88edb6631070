package search

import (
	"hash/maphash"
	"math/bits"
	"sync"
)

// A parallel build of nodmix's ranker does the work of a distinct word or pair of adjacent
// words once, not once per chunk that meets it: a large catalog's chunks share most of their
// vocabulary, and analyzing a word (splitting, stemming, interning its terms) costs far more
// than meeting it again. The build runs in three passes:
//
//  1. Every chunk, on a goroutine of its own, reads its text into a stream of word ids of its
//     own, with the pairs of adjacent words they make, and logs the order in which it first met
//     each word and pair. Only a new word's stop-word check is done here: it decides the pairs.
//  2. The chunks' logs are merged in chunk order, which is the order one pass over all documents
//     first meets every word and pair: the build's ids. The merged words and pairs are analyzed
//     on every CPU, and their terms then interned in that order, which gives every term the id
//     one pass gives it.
//  3. Every chunk turns its stream into its documents' term cells, on a goroutine of its own.

// pairItem marks a pair in a chunk's log and in the merged order; other entries are words.
const pairItem = 1 << 31

// fieldMark starts a field's tokens in a chunk's stream: fieldMark|field. A word's token is
// its id << 1, plus one when the id of the pair it ends follows.
const fieldMark = 1 << 31

// passChunk is one chunk of a parallel build through the three passes.
type passChunk struct {
	lo, hi int
	// an holds the chunk's word tables, word list and pair table in the first pass, and is
	// the chunk's scratch (arena, slabs) in the second and third.
	an     *nodmixAnalyzer
	toks   []uint32
	ends   []int32    // ends[i]: the end of document lo+i's tokens
	log    []uint32   // words and pairs (pairItem|id) in the order the chunk first met them
	pairs  [][2]int32 // the words of each pair, by the chunk's ids
	next   []nextWord // by word
	wordOf []int32    // the build's id of each of the chunk's words
	pairOf []int32    // the build's id of each of the chunk's pairs

	// The second pass: this chunk's goroutine analyzed the build's words from the previous
	// chunk's whi (0 for the first chunk) to its own, and hashes are their terms' hashes, in
	// order.
	whi    int
	hashes []uint32
}

// analyzeNodmixParallel is analyzeParallel for nodmix's analyzer, which it fills as one pass
// over docs would.
func analyzeNodmixParallel(docs []RankDoc, a *nodmixAnalyzer, parts []rankPart, cells [][]termCell, lens []float64, nf int) (termTable, [][]int32) {
	chunks := make([]passChunk, len(parts))
	var wg sync.WaitGroup
	for k := range chunks {
		c := &chunks[k]
		c.lo, c.hi, c.an = parts[k].lo, parts[k].hi, parts[k].an.(*nodmixAnalyzer)
		wg.Go(func() { c.read(docs[c.lo:c.hi]) })
	}
	wg.Wait()

	// The first chunk's words and pairs are the first of the build, with the same ids: they
	// are analyzed while the later chunks' are merged after them.
	first := &chunks[0]
	terms := termTable{seed: maphash.MakeSeed()}
	npairs := 0
	for k := range chunks {
		npairs += len(chunks[k].pairs)
	}
	pairTerms := make([]string, npairs) // as many as the build has, at most
	pairHashes := make([]uint32, npairs)
	firstWords, firstPairs := first.an.list[:len(first.an.list):len(first.an.list)], first.pairs
	wg.Go(func() {
		first.analyzeWords(firstWords, 0, len(firstWords), terms.seed)
		first.analyzePairs(firstWords, firstPairs, 0, len(firstPairs), pairTerms, pairHashes, terms.seed)
	})
	a.words, a.short, a.list = first.an.words, first.an.short, first.an.list
	order, pairs := first.log, first.pairs
	first.wordOf = make([]int32, len(firstWords))
	for id := range first.wordOf {
		first.wordOf[id] = int32(id)
	}
	first.pairOf = make([]int32, len(firstPairs))
	for id := range first.pairOf {
		first.pairOf[id] = int32(id)
	}
	joins := first.an.joins
	for k := 1; k < len(chunks); k++ {
		c := &chunks[k]
		c.wordOf = make([]int32, len(c.an.list))
		c.pairOf = make([]int32, len(c.pairs))
		var word, pair int32
		for _, item := range c.log {
			if item&pairItem == 0 {
				info := c.an.list[word]
				if have := a.cached(info.raw); have != nil {
					c.wordOf[word] = have.id
				} else {
					info.id = int32(len(a.list)) // the chunk's word is renumbered in place
					a.list = append(a.list, info)
					a.cache(info)
					order = append(order, uint32(info.id))
					c.wordOf[word] = info.id
				}
				word++
				continue
			}
			p := c.pairs[pair]
			x, y := c.wordOf[p[0]], c.wordOf[p[1]]
			id, ok := joins.get(x, y)
			if !ok {
				id = int32(len(pairs))
				joins.put(x, y, id)
				pairs = append(pairs, [2]int32{x, y})
				order = append(order, pairItem|uint32(id))
			}
			c.pairOf[pair] = id
			pair++
		}
	}
	wg.Wait()

	// The later chunks' new words, then their new pairs (which join the words' lowercase
	// forms), in ranges: the first chunk's range continues its words.
	pairTerms, pairHashes = pairTerms[:len(pairs)], pairHashes[:len(pairs)]
	n := len(chunks)
	restWords, restPairs := len(a.list)-len(firstWords), len(pairs)-len(firstPairs)
	for k := range chunks {
		c := &chunks[k]
		lo, hi := len(firstWords)+k*restWords/n, len(firstWords)+(k+1)*restWords/n
		c.whi = hi
		wg.Go(func() { c.analyzeWords(a.list, lo, hi, terms.seed) })
	}
	wg.Wait()
	// Every word of a first build is used, so the vocabulary is the parts of all of them,
	// known now: it is made while the terms are interned and the cells made, not after.
	a.vocabDone = make(chan struct{})
	go func(list []*wordInfo) {
		defer close(a.vocabDone)
		a.vocab = newVocabSet(len(list))
		for _, info := range list {
			for _, w := range info.parts {
				if vocabPart(w) {
					a.vocab.add(w)
				}
			}
		}
		a.sorted = a.vocab.sorted()
	}(a.list)
	for k := range chunks {
		c := &chunks[k]
		lo, hi := len(firstPairs)+k*restPairs/n, len(firstPairs)+(k+1)*restPairs/n
		wg.Go(func() { c.analyzePairs(a.list, pairs, lo, hi, pairTerms, pairHashes, terms.seed) })
	}
	wg.Wait()

	// Terms take their ids in the order one pass meets them.
	nterms := len(pairs)
	for k := range chunks {
		nterms += len(chunks[k].hashes)
	}
	// nterms counts a term as often as words and pairs have it (a word's parts recur in other
	// words): about half are distinct, and a table sized for all of them would be twice as large
	// as one pass's, for every probe of the ranker's searches and updates to miss in.
	terms.alloc(nterms / 2)
	terms.strs = make([]string, 0, nterms)
	a.hot = make([]wordHot, 0, len(a.list))
	a.tids = make([]int32, 0, nterms-len(pairs))
	pairIDs := make([]int32, len(pairs))
	k, at := 0, 0 // the chunk whose hashes the next word's terms are at, and where
	for _, item := range order {
		if item&pairItem != 0 {
			p := item &^ pairItem
			pairIDs[p], _ = terms.internHash(pairTerms[p], pairHashes[p])
			continue
		}
		for int(item) >= chunks[k].whi {
			k, at = k+1, 0
		}
		info := a.list[item]
		off := len(a.tids)
		for _, term := range info.terms {
			id, _ := terms.internHash(term, chunks[k].hashes[at])
			at++
			a.tids = append(a.tids, id)
		}
		a.hot = append(a.hot, wordHot{off: int32(off), n: int32(len(info.terms)), stop: info.stop})
	}

	counts := make([][]int32, len(chunks))
	for k := range chunks {
		c := &chunks[k]
		wg.Go(func() {
			counts[k] = c.fill(a, terms.len(), pairIDs, cells[c.lo:c.hi], lens[c.lo*nf:c.hi*nf], nf)
		})
	}
	wg.Wait()
	a.docWords = make([][]int32, 0, len(docs))
	for k := range chunks {
		a.docWords = append(a.docWords, chunks[k].an.docWords...)
	}
	return terms, counts
}

// read is the first pass over the chunk's documents.
func (c *passChunk) read(docs []RankDoc) {
	a := c.an
	// About six distinct pairs, three short words and one longer (a name, an id) a document in
	// large catalogs: tables that grow while the chunk is read cost their rehashing.
	a.joins.init(6 * len(docs))
	a.words.init(len(docs))
	a.short.init(3 * len(docs))
	a.list = make([]*wordInfo, 0, 3*len(docs))
	c.next = make([]nextWord, 0, 3*len(docs))
	c.log = make([]uint32, 0, 10*len(docs))
	c.pairs = make([][2]int32, 0, 6*len(docs))
	c.ends = make([]int32, len(docs))
	size := 0
	for i := range docs {
		d := &docs[i]
		size += len(d.Name) + len(d.ID) + len(d.Label) + len(d.Description) + len(d.ParamText)
	}
	c.toks = make([]uint32, 0, size/4)
	for i := range docs {
		d := &docs[i]
		c.field(fieldName, ownName(d))
		c.field(fieldID, d.ID)
		if d.Label != d.Name {
			c.field(fieldLabel, d.Label)
		}
		lead, body := splitLead(d.Description)
		c.field(fieldDescription, lead)
		c.field(fieldBody, body)
		c.field(fieldServer, d.Server)
		c.field(fieldParams, d.ParamText)
		for _, k := range d.SchemaKeys {
			c.field(fieldKeys, k)
		}
		c.ends[i] = int32(len(c.toks))
	}
}

// field is fieldIDs of the first pass: it adds the tokens of one field's text.
func (c *passChunk) field(f int, text string) {
	if text == "" || nodmixFields[f].weight == 0 {
		return
	}
	a := c.an
	c.toks = append(c.toks, fieldMark|uint32(f))
	prev := int32(-1)
	for i := 0; i < len(text); {
		for i < len(text) && byteClass[text[i]] == classSep {
			i++
		}
		start := i
		i = wordEnd(text, i)
		if i < len(text) && byteClass[text[i]] == classMulti {
			t := &a.sink
			t.raws = rawWordsRunes(t.raws[:0], text, start)
			for _, raw := range t.raws {
				info := a.cached(raw)
				if info == nil {
					info = c.newWord(raw)
					a.cache(info)
				}
				prev = c.occur(info.id, prev)
			}
			return
		}
		if i == start {
			break
		}
		var id int32
		if n := i - start; n <= 15 {
			k0, k1 := packASCII(text, start, n)
			if id = a.short.find2(k0, k1); id < 0 {
				info := c.newWord(text[start:i])
				a.short.insert([2]uint64{k0, k1}, info.id)
				id = info.id
			}
		} else {
			raw := text[start:i]
			h := a.words.hash(raw)
			info := a.words.find(h, raw)
			if info == nil {
				info = c.newWord(raw)
				a.words.insert(h, info)
			}
			id = info.id
		}
		prev = c.occur(id, prev)
	}
}

// nextWord is what the first pass keeps of a word of its chunk: whether it is a stop word, and
// the word that last came after it, with the id of their pair. A word is often followed by the
// word that followed it last (a phrase, a name, a parameter's words), and then the pair is
// found in the entry just read for its first word instead of in the pair table.
type nextWord struct {
	succ, pair int32 // the successor's id plus one (zero: none yet), and the pair's id
	stop       bool
}

// occur adds the token of an occurrence of word id after word prev (-1 for none or a stop
// word) and returns what the next word's prev is.
func (c *passChunk) occur(id, prev int32) int32 {
	if c.next[id].stop {
		c.toks = append(c.toks, uint32(id)<<1)
		return -1
	}
	if prev < 0 {
		c.toks = append(c.toks, uint32(id)<<1)
		return id
	}
	e := &c.next[prev]
	if e.succ != id+1 {
		a := c.an
		p, ok := a.joins.get(prev, id)
		if !ok {
			p = int32(len(c.pairs))
			a.joins.put(prev, id, p)
			c.pairs = append(c.pairs, [2]int32{prev, id})
			c.log = append(c.log, pairItem|uint32(p))
		}
		e.succ, e.pair = id+1, p
	}
	c.toks = append(c.toks, uint32(id)<<1|1, uint32(e.pair))
	return id
}

// newWord adds raw, which the chunk has not met, to its words, but not to its word tables: only
// whether it is a stop word is found out now. The word is copied next to the chunk's other
// words, which the second pass reads in order, where the catalog's text has long left the
// cache.
func (c *passChunk) newWord(raw string) *wordInfo {
	a := c.an
	if len(a.infos) == cap(a.infos) {
		a.infos = make([]wordInfo, 0, 1024)
	}
	id := int32(len(a.list))
	a.infos = append(a.infos, wordInfo{id: id, raw: a.bytes.concat(raw, ""), stop: isStopRaw(raw, &a.sink)})
	info := &a.infos[len(a.infos)-1]
	a.list = append(a.list, info)
	c.next = append(c.next, nextWord{stop: info.stop})
	c.log = append(c.log, uint32(id))
	return info
}

// isStopRaw reports whether the lowercase form of raw word raw (splitWord's first part) is a
// stop word.
func isStopRaw(raw string, t *termSink) bool {
	if !isASCII(raw) {
		t.parts = splitWordsRunes(t.parts[:0], raw, &t.buf)
		return isNodmixStopWord(t.parts[0])
	}
	if len(raw) > maxStopWordLen {
		return false
	}
	return isStopKey(packStopWord(raw, true))
}

// analyzeWords analyzes the build's words lo to hi, as newWord does, and appends the hashes
// of their terms for the term table to c.hashes.
func (c *passChunk) analyzeWords(list []*wordInfo, lo, hi int, seed maphash.Seed) {
	a := c.an
	t := &a.sink
	for _, info := range list[lo:hi] {
		t.parts = a.splitWord(t.parts[:0], info.raw, &t.buf)
		t.stems = t.stems[:0]
		for _, w := range t.parts {
			if !isNodmixStopWord(w) {
				t.stems = a.appendStemVariants(t.stems, w)
			}
		}
		info.lower = t.parts[0]
		info.parts = a.slabStrings(t.parts)
		info.terms = a.slabStrings(t.stems)
		for _, term := range info.terms {
			c.hashes = append(c.hashes, uint32(maphash.String(seed, term)))
		}
	}
}

// analyzePairs makes the joined term of the build's pairs lo to hi, and hashes it.
func (c *passChunk) analyzePairs(list []*wordInfo, pairs [][2]int32, lo, hi int, out []string, hashes []uint32, seed maphash.Seed) {
	a := c.an
	for p := lo; p < hi; p++ {
		term := stem(a.bytes.concat(list[pairs[p][0]].lower, list[pairs[p][1]].lower))
		out[p] = term
		hashes[p] = uint32(maphash.String(seed, term))
	}
}

// chunkWord is what the third pass reads of a chunk's word at every occurrence.
type chunkWord struct {
	off, n int32 // its term ids are the build's tids[off:off+n]; off is the id when n is 1
	id     int32 // the build's id
}

// fill is the third pass: the chunk's documents' cells and field lengths, as analyzeRange
// makes them, from its tokens; the chunk's analyzer gets their docWords. It returns how many
// of the chunk's documents have each term, which postings counts otherwise.
func (c *passChunk) fill(a *nodmixAnalyzer, nterms int, pairIDs []int32, cells [][]termCell, lens []float64, nf int) []int32 {
	words := make([]chunkWord, len(c.wordOf))
	for w, id := range c.wordOf {
		h := a.hot[id]
		words[w] = chunkWord{off: h.off, n: h.n, id: id}
		if h.n == 1 { // most words: their term is read with the word
			words[w].off = a.tids[h.off]
		}
	}
	pairTerm := make([]int32, len(c.pairOf))
	for p, id := range c.pairOf {
		pairTerm[p] = pairIDs[id]
	}
	tids := a.tids
	b := c.an // the chunk's documents' words, by the build's ids
	b.docWords = make([][]int32, 0, c.hi-c.lo)
	b.wordArena = nil
	b.seen = make([]int32, len(a.list))

	var acc docAccum
	acc.slot = make([]int32, nterms)
	docs := make([]int32, nterms) // by term: the documents that have it
	flat := make([]termCell, 0, 48*(c.hi-c.lo))
	from := int32(0)
	for i := range c.hi - c.lo {
		acc.acc = acc.acc[:0]
		acc.lens = lens[i*nf : (i+1)*nf]
		b.wordFrom = len(b.wordArena)
		b.doc = int32(i + 1)
		f := 0
		toks := c.toks[from:c.ends[i]]
		from = c.ends[i]
		for j := 0; j < len(toks); j++ {
			tok := toks[j]
			if tok&fieldMark != 0 {
				f = int(tok &^ fieldMark)
				continue
			}
			w := &words[tok>>1]
			b.noteWord(w.id)
			if w.n == 1 {
				acc.add(f, w.off, 1)
			} else {
				for _, t := range tids[w.off : w.off+w.n] {
					acc.add(f, t, 1)
				}
			}
			if tok&1 != 0 {
				j++
				acc.add(f, pairTerm[toks[j]], nodmixJoinWeight)
			}
		}
		end := len(b.wordArena)
		b.docWords = append(b.docWords, b.wordArena[b.wordFrom:end:end])
		for _, tc := range acc.acc {
			docs[tc.term]++
		}
		at := len(flat)
		flat = acc.appendCells(flat)
		cells[i] = flat[at:len(flat):len(flat)] // if flat grows later, this keeps its array
	}
	return docs
}

// appendCells appends the document's cells to flat, one per term and field, grouped by term
// in order of first occurrence, and clears the document's slots.
func (d *docAccum) appendCells(flat []termCell) []termCell {
	for _, tc := range d.acc {
		d.slot[tc.term] = 0
		for m := tc.fields; m != 0; m &= m - 1 { // fields in order
			f := bits.TrailingZeros8(m)
			flat = append(flat, newCell(tc.term, f, tc.counts[f]))
		}
	}
	return flat
}
