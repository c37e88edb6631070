package search

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRankerUpdate: a ranker updated after tools were removed, changed and added answers
// every query exactly (same hits, same scores) as one built afresh over the new tools,
// through a chain of updates, in both modes.
func TestRankerUpdate(t *testing.T) {
	tools := readTools(t, sealtoolsTools)
	base := rankDocs(tools, true)
	queries := readQueryFile(t, sealtoolsQueries)[:150]
	// Each step stands for a server reconnecting with a changed tool list.
	steps := []func([]RankDoc) []RankDoc{
		func(d []RankDoc) []RankDoc { return d },                                                     // nothing changed
		func(d []RankDoc) []RankDoc { return append(append([]RankDoc{}, d[:1000]...), d[1400:]...) }, // removed
		func(d []RankDoc) []RankDoc { // changed, and moved
			out := append([]RankDoc{}, d[2000:]...)
			out = append(out, d[:2000]...)
			for i := 0; i < len(out); i += 37 {
				out[i].Description += " quantum flux calibration"
				out[i].SchemaKeys = append(out[i].SchemaKeys[:len(out[i].SchemaKeys):len(out[i].SchemaKeys)], "fluxLevel")
			}
			return out
		},
		func(d []RankDoc) []RankDoc { // added
			out := append([]RankDoc{}, d...)
			for i := range 300 {
				doc := base[i]
				doc.ID = fmt.Sprintf("new/%d", i)
				doc.Name = fmt.Sprintf("brandnewtool_%d", i)
				out = append(out, doc)
			}
			return out
		},
	}
	for _, opts := range []RankerOptions{{}, {Reference: true}} {
		docs := base
		r := NewRanker(docs, opts)
		for step, change := range steps {
			docs = change(docs)
			r = r.Update(docs)
			fresh := NewRanker(docs, opts)
			// The vocabulary query words are checked against, which an update may share
			// with the ranker it updates, is a fresh build's.
			if a, ok := r.an.(*nodmixAnalyzer); ok {
				f := fresh.an.(*nodmixAnalyzer)
				if !slices.Equal(a.sorted, f.sorted) || a.vocab.n != f.vocab.n {
					t.Fatalf("step %d: the updated vocabulary differs from a fresh build's", step)
				}
			}
			for _, q := range append(queries, Query{Query: "brandnewtool fluxlevel calibration"}) {
				if diff := cmp.Diff(fresh.Search(q.Query, 20, nil), r.Search(q.Query, 20, nil)); diff != "" {
					t.Fatalf("reference %v, step %d, query %q (-fresh +updated):\n%s", opts.Reference, step, q.Query, diff)
				}
			}
		}
	}
}

// TestRankerUpdateConcurrent: updates share the word analyses of the ranker they start from,
// which searches keep reading meanwhile; two updates of one ranker may run at once (the race
// detector checks that nothing shared is written).
func TestRankerUpdateConcurrent(t *testing.T) {
	docs := rankDocs(readTools(t, sealtoolsTools)[:1500], true)
	r := NewRanker(docs, RankerOptions{})
	changed := append([]RankDoc{}, docs...)
	for i := 0; i < len(changed); i += 10 {
		changed[i].Description += " telescope mirror alignment"
	}
	var wg sync.WaitGroup
	updated := make([]*Ranker, 2)
	for i := range updated {
		wg.Go(func() { updated[i] = r.Update(changed[i*100:]) })
	}
	wg.Go(func() {
		for range 50 {
			r.Search("align the telescope mirrors", 5, nil)
		}
	})
	wg.Wait()
	for i, u := range updated {
		want := NewRanker(changed[i*100:], RankerOptions{}).Search("telescope alignment", 10, nil)
		if diff := cmp.Diff(want, u.Search("telescope alignment", 10, nil)); diff != "" {
			t.Errorf("update %d (-fresh +updated):\n%s", i, diff)
		}
	}
}
