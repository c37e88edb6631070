package search

import (
	"hash/maphash"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// Corpus holds documents tokenized once, ready to be indexed in any subset. A Corpus is
// immutable after construction and safe for concurrent use; Update derives a new one.
type Corpus struct {
	dict *termDict // term → id; never modified once the corpus is built
	docs []Doc     // Update compares content; BM25 breaks ties by Name
	// Document i's terms, in order of first occurrence and with their weighted
	// frequencies, are terms[start[i]:start[i+1]].
	start []int32
	terms []docTerm
	lens  []uint32
	// tokenized is how many documents the build that made the corpus tokenized rather
	// than reused, so that a test can tell an update that reuses from one that only
	// gives the same answers.
	tokenized int
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
	return c.update(docs, runtime.GOMAXPROCS(0))
}

// update is Update on at most procs goroutines. The result does not depend on procs:
// each goroutine tokenizes a contiguous chunk of the documents to build on a dictionary
// of its own, and the dictionaries are merged in chunk order, which gives every term the
// id that one pass over all the chunks would (TestCorpusWorkersAgree).
func (c *Corpus) update(docs []Doc, procs int) *Corpus {
	nc := &Corpus{
		docs:  docs,
		start: make([]int32, len(docs)+1),
		lens:  make([]uint32, len(docs)),
	}
	// todo lists the documents to tokenize, nil for all of them when c has none to
	// reuse, as on a first build; reuse is nil then too.
	var reuse []int32
	var todo []int
	ntodo := len(docs)
	if len(c.docs) > 0 {
		reuse = c.unchanged(docs)
		ntodo = 0
		for _, j := range reuse {
			ntodo += int(uint32(j) >> 31)
		}
		todo = make([]int, 0, ntodo)
		for i, j := range reuse {
			if j < 0 {
				todo = append(todo, i)
			}
		}
	}
	// A catalog has about one distinct term for every two to three new documents.
	hint := min(ntodo, 1<<15) / 2
	if c.dict != nil {
		nc.dict = c.dict.clone()
	} else {
		nc.dict = newTermDict(hint)
	}
	workers := max(1, min(procs, ntodo/minDocsPerWorker))
	// Chunk w is todo[cut[w]:cut[w+1]]. A fresh build's chunks append their terms to
	// consecutive regions of one array, each sized by an estimate, and are moved together
	// below: the array becomes the corpus's without a copy of the whole.
	fresh := ntodo == len(docs)
	cut, regions := cutChunks(docs, todo, ntodo, workers) // chunk w's region starts at regions[w]
	// On a first build the last two chunks are one span that two builders share from
	// either end (meeting): the first of them has both regions, the second terms of
	// its own, put in place by assembleFresh.
	meet := todo == nil && workers >= 2
	parts := make([]*corpusBuilder, workers)
	for w := range parts {
		parts[w] = &corpusBuilder{dict: nc.dict}
	}
	if meet {
		m := &meeting{size: len(docs) - cut[workers-2], lo: cut[workers-2], hi: len(docs)}
		parts[workers-2].meet, parts[workers-1].meet = m, m
		parts[workers-1].backward = true
	}
	chunk := func(w int) {
		b := parts[w]
		if w > 0 {
			// A chunk of a catalog holds nearly all of its terms: sized for
			// fewer, the dictionary would grow twice on the way.
			b.dict = newTermDict(hint)
		}
		switch {
		case b.meet != nil:
			if b.backward {
				b.terms = make([]docTerm, 0, regions[w+1]-regions[w])
				b.lens = make([]uint32, 0, cut[w+1]-cut[w])
			}
			b.buildMet(docs)
		case todo == nil:
			b.build(docs[cut[w]:cut[w+1]], nil)
		default:
			b.build(docs, todo[cut[w]:cut[w+1]])
		}
	}
	// The backward builder needs nothing of what follows, and starts first.
	var wg sync.WaitGroup
	if meet {
		wg.Go(func() { chunk(workers - 1) })
	}
	var all []docTerm
	if fresh {
		all = make([]docTerm, regions[workers])
		for w, b := range parts {
			end := w + 1
			if meet && w == workers-2 {
				end = workers
			}
			if !b.backward {
				b.terms = all[regions[w]:regions[w]:regions[end]]
				b.lens = nc.lens[cut[w]:cut[w]:cut[end]]
				b.region = regions[w]
			}
		}
	}
	for w := 1; w < workers; w++ {
		if !parts[w].backward {
			wg.Go(func() { chunk(w) })
		}
	}
	chunk(0)
	wg.Wait()
	for _, b := range parts {
		nc.tokenized += len(b.lens)
	}
	if fresh && nc.assembleFresh(parts, all) {
		return nc
	}
	for _, b := range parts {
		if b.backward {
			b.forwards()
		}
	}
	remaps := make([][]int32, workers) // nil for the first part, built on nc.dict
	for w := 1; w < workers; w++ {
		remaps[w] = nc.dict.merge(parts[w].dict)
	}
	if reuse == nil {
		reuse = make([]int32, len(docs))
		for i := range reuse {
			reuse[i] = -1
		}
	}
	total := 0
	for _, b := range parts {
		total += len(b.terms)
	}
	for _, j := range reuse {
		if j >= 0 {
			total += int(c.start[j+1] - c.start[j])
		}
	}
	nc.terms = make([]docTerm, 0, total)
	part, k := 0, 0 // next built document: parts[part]'s document k
	for i, j := range reuse {
		if j >= 0 {
			nc.terms = append(nc.terms, c.terms[c.start[j]:c.start[j+1]]...)
			nc.lens[i] = c.lens[j]
		} else {
			for k == len(parts[part].lens) {
				part, k = part+1, 0
			}
			b := parts[part]
			terms := b.terms[b.ends[k]:b.ends[k+1]]
			if remap := remaps[part]; remap != nil {
				for _, t := range terms {
					nc.terms = append(nc.terms, docTerm{id: remap[t.id], freq: t.freq})
				}
			} else {
				nc.terms = append(nc.terms, terms...)
			}
			nc.lens[i] = b.lens[k]
			k++
		}
		nc.start[i+1] = int32(len(nc.terms))
	}
	return nc
}

// cutChunks cuts the ntodo documents of todo (docs when todo is nil) into workers contiguous chunks of about the same bytes of text,
// which is what tokenizing costs, so that no goroutine waits long for the others: chunk
// w is todo[cut[w]:cut[w+1]]. A schema key counts for its few bytes and its own token.
// The chunks' regions, each the room estimateTerms gives its terms, start at regions[w].
// Both come from the documents' headers in one pass and a half, not from their text.
func cutChunks(docs []Doc, todo []int, ntodo, workers int) (cut, regions []int) {
	doc := func(k int) *Doc {
		if todo == nil {
			return &docs[k]
		}
		return &docs[todo[k]]
	}
	cut = make([]int, workers+1)
	regions = make([]int, workers+1)
	cut[workers] = ntodo
	total, room := 0, 0
	for k := range ntodo {
		d := doc(k)
		total += textSize(d)
		room += termRoom(d)
	}
	w, sum, part, used := 1, 0, 0, 0 // part is the room of the chunk being cut, used that of those before
	for k := 0; w < workers && k < ntodo; k++ {
		if sum >= w*(total/workers) {
			cut[w] = k
			regions[w] = regions[w-1] + estimate(part, k-cut[w-1])
			w, used, part = w+1, used+part, 0
		}
		d := doc(k)
		sum += textSize(d)
		part += termRoom(d)
	}
	for ; w < workers; w++ { // the text ran out first: the last chunks are empty
		cut[w] = ntodo
		regions[w] = regions[w-1] + estimate(part, ntodo-cut[w-1])
		used, part = used+part, 0
	}
	regions[workers] = regions[workers-1] + estimate(room-used, ntodo-cut[workers-1])
	return cut, regions
}

// textSize is the bytes of d's text that cutChunks balances.
func textSize(d *Doc) int {
	return len(d.Name) + len(d.Label) + len(d.ServerName) + len(d.MCPToolName) + len(d.Summary) + 16*len(d.SchemaKeys) + 16
}

// assembleFresh lays out the chunks of a fresh build one after the other in all, their
// ids mapped to the corpus dictionary on the way, and reports false, having changed
// nothing, if they do not fit. A chunk that outgrew its region was moved by growing and
// is copied from where it went, as is a backward chunk, the last, whose documents are
// put in order and whose terms are merged in that order; the others move down from their
// regions, in order, which is safe as long as no chunk has to move up (each entry is read
// before anything is written over it, and no chunk is written over one still to be
// read).
func (nc *Corpus) assembleFresh(parts []*corpusBuilder, all []docTerm) bool {
	pos := 0
	inPlace := make([]bool, len(parts))
	for w, b := range parts {
		inPlace[w] = !b.backward && cap(b.terms) > 0 && b.region+cap(b.terms) <= len(all) &&
			&b.terms[:1][0] == &all[b.region]
		if inPlace[w] && pos > b.region {
			return false
		}
		pos += len(b.terms)
	}
	if pos > len(all) {
		return false
	}
	pos, doc := 0, 0
	for w, b := range parts {
		if b.backward {
			nc.placeBackward(b, all, pos, doc)
			pos += len(b.terms)
			doc += len(b.lens)
			continue
		}
		n := len(b.terms)
		src, dst := b.terms, all[pos:pos+n]
		switch {
		case w > 0:
			remap := nc.dict.merge(b.dict)
			for k, t := range src {
				dst[k] = docTerm{id: remap[t.id], freq: t.freq}
			}
		case !inPlace[w]:
			copy(dst, src)
		}
		for k := range b.lens {
			nc.start[doc+k+1] = int32(pos) + b.ends[k+1]
		}
		doc += len(b.lens)
		pos += n
	}
	nc.terms = all[:pos]
	return true
}

// placeBackward merges the dictionary of backward builder b in document order and
// writes its documents in that order to all from pos on, as documents doc on. The
// merge is one pass; the documents, whose places follow from their ends, are then
// written in two halves at once.
func (nc *Corpus) placeBackward(b *corpusBuilder, all []docTerm, pos, doc int) {
	remap := make([]int32, len(b.dict.keys))
	for i := range remap {
		remap[i] = -1
	}
	nd := len(b.lens)
	for k := nd - 1; k >= 0; k-- {
		for _, t := range b.terms[b.ends[k]:b.ends[k+1]] {
			if remap[t.id] < 0 {
				remap[t.id] = nc.dict.mergeTerm(b.dict, t.id)
			}
		}
	}
	n := int32(len(b.terms))
	place := func(lo, hi int) { // builder documents lo to hi
		for k := lo; k < hi; k++ {
			at := int32(pos) + n - b.ends[k+1]
			for j, t := range b.terms[b.ends[k]:b.ends[k+1]] {
				all[at+int32(j)] = docTerm{id: remap[t.id], freq: t.freq}
			}
			d := doc + nd - 1 - k
			nc.start[d+1] = at + b.ends[k+1] - b.ends[k]
			nc.lens[d] = b.lens[k]
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { place(nd/2, nd) })
	place(0, nd/2)
	wg.Wait()
}

// estimateTerms is room for the terms of docs[i] for every i in which (every document
// of docs when which is nil): about one
// distinct term for every seven bytes of name, server name and summary, one a schema key
// and one more a document, and room for the tokens of one document at the end (the
// builder makes room for every token of a document before adding them). It reads no
// text: labels and tool names mostly repeat the name, and a schema key is mostly one
// word. A corpus with more grows.
func estimateTerms(docs []Doc, which []int) int {
	room := 0
	if which == nil {
		for i := range docs {
			room += termRoom(&docs[i])
		}
		return estimate(room, len(docs))
	}
	for _, i := range which {
		room += termRoom(&docs[i])
	}
	return estimate(room, len(which))
}

// termRoom is a document's part of estimateTerms, in sevenths of a term.
func termRoom(d *Doc) int {
	return len(d.Name) + len(d.ServerName) + len(d.Summary) + 7*len(d.SchemaKeys)
}

// estimate is estimateTerms of n documents whose termRoom adds up to room.
func estimate(room, n int) int { return room/7 + n + 256 }

// unchanged maps every document of docs to an old document of c with the same
// content, or to -1. A catalog mostly keeps its order from one version to the next, so
// documents are first paired in step, a document added or removed skipped on the way;
// the rest are looked up by a hash of their content. Every pairing is confirmed field by
// field, and documents with the same content have the same terms, so which of several
// identical old documents one pairs with changes nothing.
func (c *Corpus) unchanged(docs []Doc) []int32 {
	reuse := make([]int32, len(docs))
	for i := range reuse {
		reuse[i] = -1
	}
	if len(c.docs) == 0 {
		return reuse
	}
	paired := make([]bool, len(c.docs))
	var left []int // documents not paired in step
	j := 0
	for i := range docs {
		switch {
		case j < len(c.docs) && sameDoc(&c.docs[j], &docs[i]):
		case j+1 < len(c.docs) && sameDoc(&c.docs[j+1], &docs[i]):
			j++ // c.docs[j] was removed or changed
		default:
			left = append(left, i) // added or changed
			continue
		}
		reuse[i], paired[j] = int32(j), true
		j++
	}
	if len(left) == 0 {
		return reuse
	}
	seed := maphash.MakeSeed()
	old := make(map[uint64][]int32)
	for j := range c.docs {
		if !paired[j] {
			h := hashDoc(seed, &c.docs[j])
			old[h] = append(old[h], int32(j))
		}
	}
	for _, i := range left {
		for _, cand := range old[hashDoc(seed, &docs[i])] {
			if sameDoc(&c.docs[cand], &docs[i]) {
				reuse[i] = cand
				break
			}
		}
	}
	return reuse
}

// hashDoc hashes the content of d, field by field.
func hashDoc(seed maphash.Seed, d *Doc) uint64 {
	h := uint64(len(d.SchemaKeys))
	mix := func(s string) { h = bits.RotateLeft64(h, 29)*0x9e3779b97f4a7c15 ^ maphash.String(seed, s) }
	mix(d.Name)
	mix(d.Label)
	mix(d.ServerName)
	mix(d.MCPToolName)
	mix(d.Summary)
	for _, k := range d.SchemaKeys {
		mix(k)
	}
	return h
}

func sameDoc(a, b *Doc) bool {
	return a.Name == b.Name && a.Label == b.Label && a.ServerName == b.ServerName &&
		a.MCPToolName == b.MCPToolName && a.Summary == b.Summary && slices.Equal(a.SchemaKeys, b.SchemaKeys)
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
	for _, t := range c.terms[lo:hi] {
		out = append(out, TermFreq{Term: c.dict.term(t.id), Freq: int(t.freq)})
	}
	return out
}
