package search

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRankerWorkers: a build on several goroutines gives the ranker one pass gives: the same
// term ids, postings, frequencies and norms, the same word analyses and vocabulary, and so
// the same hits and scores, in both modes.
func TestRankerWorkers(t *testing.T) {
	docs := append(rankDocs(readTools(t, sealtoolsTools), true), rankDocs(readTools(t, metatoolTools), true)...)
	queries := append(readQueryFile(t, sealtoolsQueries)[:100], readQueryFile(t, metatoolQueries)[:100]...)
	for _, opts := range []RankerOptions{{}, {Reference: true}} {
		build := func(workers int) *Ranker {
			var an analyzer = referenceAnalyzer{}
			if !opts.Reference {
				an = newNodmixAnalyzer()
			}
			r := buildRanker(docs, an, nil, nil, workers)
			r.opts = opts
			return r
		}
		one := build(1)
		for _, workers := range []int{2, 3, 4} {
			r := build(workers)
			if got := len(rankParts(docs, r.an, nil, workers)); got != workers {
				t.Fatalf("%d workers: %d parts", workers, got)
			}
			same := func(what string, eq bool) {
				t.Helper()
				if !eq {
					t.Fatalf("reference %v, %d workers: %s differ from one pass's", opts.Reference, workers, what)
				}
			}
			same("terms", slices.Equal(one.terms.strs, r.terms.strs))
			same("postings", slices.Equal(one.start, r.start) && slices.Equal(one.post, r.post))
			same("frequencies", slices.Equal(one.freq, r.freq) && slices.Equal(one.norm, r.norm))
			same("lengths", slices.Equal(one.lens, r.lens))
			same("cells", slices.EqualFunc(one.cells, r.cells, slices.Equal))
			for i := range docs {
				for _, id := range []string{docs[i].ID} {
					same("exact tables", slices.Equal(slices.Collect(one.exact.idDocs(id)), slices.Collect(r.exact.idDocs(id))))
				}
			}
			if a, ok := one.an.(*nodmixAnalyzer); ok {
				b := r.an.(*nodmixAnalyzer)
				same("word lists", slices.EqualFunc(a.list, b.list, func(x, y *wordInfo) bool {
					return x.id == y.id && x.raw == y.raw && x.stop == y.stop &&
						slices.Equal(x.terms, y.terms)
				}))
				same("word terms", slices.Equal(a.hot, b.hot) && slices.Equal(a.tids, b.tids))
				same("document words", slices.EqualFunc(a.docWords, b.docWords, slices.Equal))
				same("vocabularies", slices.Equal(a.sorted, b.sorted) && a.vocab.n == b.vocab.n)
				for _, info := range a.list {
					if got := b.cached(info.raw); got == nil || got.id != info.id {
						t.Fatalf("%d workers: word %q not cached as %d", workers, info.raw, info.id)
					}
				}
			}
			for _, q := range queries {
				if diff := cmp.Diff(one.Search(q.Query, 20, nil), r.Search(q.Query, 20, nil)); diff != "" {
					t.Fatalf("reference %v, %d workers, %q (-one pass +parallel):\n%s", opts.Reference, workers, q.Query, diff)
				}
			}
			// An update of a parallel build continues its tables.
			changed := slices.Clone(docs)
			for i := 0; i < len(changed); i += 50 {
				changed[i].Description += " telescope mirror alignment"
			}
			fresh := NewRanker(changed, opts)
			up := r.Update(changed)
			for _, q := range append(queries[:40], Query{Query: "align the telescope mirrors"}) {
				if diff := cmp.Diff(fresh.Search(q.Query, 20, nil), up.Search(q.Query, 20, nil)); diff != "" {
					t.Fatalf("reference %v, %d workers, update, %q (-fresh +updated):\n%s", opts.Reference, workers, q.Query, diff)
				}
			}
		}
	}
}
