package discovery

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/search"
)

// docsPerWorker is the least number of tools docsOf gives a goroutine of its own: reading the
// schema keys of every tool is a fifth of a first search at 10,000 tools, worth the CPUs there,
// not for a few hundred.
const docsPerWorker = 1024

// touchBatch is how many tools fillDocs reads the schemas of at once, a batch ahead of the
// tools whose documents it makes. A snapshot's tools are in id order, their schemas anywhere
// on the heap: reading the first bytes of a schema misses the cache every time, and misses
// issued together wait for memory together, where one at a time each would stall the CPU
// on its own.
const touchBatch = 8

// claimBatch is how many tools a goroutine of fillDocs takes at a time.
const claimBatch = 128

// touchSchema reads a byte of every cache line of t's schema and returns their sum, which
// the caller keeps so that the reads are not optimized away.
func touchSchema(t *catalog.Tool) byte {
	var x byte
	for j := 0; j < len(t.InputSchema); j += 64 {
		x += t.InputSchema[j]
	}
	return x
}

// docsOf returns the search documents of entries, in order.
func docsOf(entries []*catalog.Entry) []search.Doc {
	docs := make([]search.Doc, len(entries))
	fillDocs(docs, entries, nil)
	return docs
}

// docsAfter returns the search documents of entries, taking the document of every tool that is
// unchanged since the entries before (whose documents are docs) from there: when a server
// reconnects, its tools are read again, not the whole catalog's. Both lists are in id order, as
// a snapshot keeps its entries, so one merge pass pairs them.
func docsAfter(before []*catalog.Entry, docs []search.Doc, entries []*catalog.Entry) []search.Doc {
	out := make([]search.Doc, len(entries))
	var todo []int
	j := 0
	for i, e := range entries {
		id := e.Tool.ID
		for j < len(before) && before[j].Tool.ID != id && before[j].Tool.ID < id { // == first: it sees shared bytes
			j++
		}
		if j < len(before) && before[j].Tool.ID == id {
			// Past it: the next entry's id is greater, or the same and then that of the
			// next old entry, and the loop above need not compare their text to get there.
			j++
			if sameDocFields(&before[j-1].Tool, &e.Tool) {
				out[i] = docs[j-1]
				continue
			}
		}
		todo = append(todo, i)
	}
	fillDocs(out, entries, todo)
	return out
}

// sameDocFields reports whether two tools have the same document: Doc reads nothing else. The
// fields of an unchanged tool share their bytes with its earlier copy, which the comparisons
// notice before reading them.
func sameDocFields(a, b *catalog.Tool) bool {
	return a.Name == b.Name && a.Label == b.Label && a.Server == b.Server && a.MCPToolName == b.MCPToolName &&
		a.Summary == b.Summary && a.Description == b.Description && bytes.Equal(a.InputSchema, b.InputSchema)
}

// fillDocs sets docs[i] to the document of entries[i] for every i in todo (every i when todo is
// nil), on several goroutines for many.
func fillDocs(docs []search.Doc, entries []*catalog.Entry, todo []int) {
	n := len(todo)
	if todo == nil {
		n = len(entries)
	}
	fill := func(lo, hi int) {
		var sink byte
		for k := lo; k < hi; k++ {
			if (k-lo)%touchBatch == 0 {
				for a := k + touchBatch; a < min(k+2*touchBatch, hi); a++ {
					j := a
					if todo != nil {
						j = todo[a]
					}
					sink += touchSchema(&entries[j].Tool)
				}
			}
			i := k
			if todo != nil {
				i = todo[k]
			}
			docs[i] = Doc(&entries[i].Tool)
		}
		runtime.KeepAlive(sink)
	}
	workers := min(runtime.GOMAXPROCS(0), n/docsPerWorker)
	if workers < 2 {
		fill(0, n)
		return
	}
	// The goroutines take the tools a batch at a time, so that one the machine runs slower
	// than the others takes fewer; each document goes to its own place, whoever makes it.
	var next atomic.Int64
	claim := func() {
		for {
			lo := int(next.Add(claimBatch)) - claimBatch
			if lo >= n {
				return
			}
			fill(lo, min(lo+claimBatch, n))
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(claim)
	}
	claim()
	wg.Wait()
}
