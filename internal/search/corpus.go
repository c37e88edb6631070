package search

import (
	"hash/maphash"
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
	reuse := c.unchanged(docs)
	var todo []int
	for i, j := range reuse {
		if j < 0 {
			todo = append(todo, i)
		}
	}
	// A catalog has about one distinct term for every two to three new documents.
	hint := min(len(todo), 1<<15) / 2
	if c.dict != nil {
		nc.dict = c.dict.clone()
	} else {
		nc.dict = newTermDict(hint)
	}
	workers := max(1, min(procs, len(todo)/minDocsPerWorker))
	parts := make([]*corpusBuilder, workers)
	parts[0] = &corpusBuilder{dict: nc.dict}
	if workers == 1 {
		parts[0].build(docs, todo)
	} else {
		var wg sync.WaitGroup
		for w := 1; w < workers; w++ {
			b := &corpusBuilder{dict: newTermDict(hint / workers)}
			parts[w] = b
			chunk := todo[w*len(todo)/workers : (w+1)*len(todo)/workers]
			wg.Go(func() { b.build(docs, chunk) })
		}
		parts[0].build(docs, todo[:len(todo)/workers])
		wg.Wait()
	}
	// Assemble in document order; a fresh build on one goroutine already is.
	if workers == 1 && len(todo) == len(docs) {
		b := parts[0]
		nc.terms, nc.lens = b.terms, b.lens
		copy(nc.start, b.ends)
		return nc
	}
	remaps := make([][]int32, workers) // nil for the first part, built on nc.dict
	for w := 1; w < workers; w++ {
		remaps[w] = nc.dict.merge(parts[w].dict)
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

// unchanged maps every document of docs to an old document of c with the same
// content, or to -1. Hashing is cheap next to tokenizing, and a hash match is
// confirmed field by field.
func (c *Corpus) unchanged(docs []Doc) []int32 {
	reuse := make([]int32, len(docs))
	for i := range reuse {
		reuse[i] = -1
	}
	if len(c.docs) == 0 {
		return reuse
	}
	seed := maphash.MakeSeed()
	old := make(map[uint64][]int32, len(c.docs))
	for j := range c.docs {
		h := hashDoc(seed, &c.docs[j])
		old[h] = append(old[h], int32(j))
	}
	for i := range docs {
		for _, cand := range old[hashDoc(seed, &docs[i])] {
			if sameDoc(&c.docs[cand], &docs[i]) {
				reuse[i] = cand
				break
			}
		}
	}
	return reuse
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
