package search

import (
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// reuseChange is a catalog change whose cost is known: an update after it must analyze
// exactly want documents. Tests that compare an update's answers with a fresh build's
// cannot see an update that redoes everything, which gives the same answers.
type reuseChange struct {
	name   string
	change func(n int, changed func(i int)) (order []int, added int)
	want   int
}

// reuseChanges describe changes of a catalog of n documents as the order of the old
// documents kept, which of them to change (through changed) and how many new ones
// to append.
var reuseChanges = []reuseChange{
	{"nothing changed", func(n int, _ func(int)) ([]int, int) { return seq(0, n), 0 }, 0},
	{"one changed", func(n int, changed func(int)) ([]int, int) { changed(n / 2); return seq(0, n), 0 }, 1},
	{"three changed", func(n int, changed func(int)) ([]int, int) {
		changed(0)
		changed(n / 3)
		changed(n - 1)
		return seq(0, n), 0
	}, 3},
	{"one removed", func(n int, _ func(int)) ([]int, int) { return append(seq(0, 10), seq(11, n)...), 0 }, 0},
	{"two added", func(n int, _ func(int)) ([]int, int) { return seq(0, n), 2 }, 2},
	{"moved", func(n int, _ func(int)) ([]int, int) {
		order := seq(0, n)
		order[5], order[n-5] = order[n-5], order[5]
		return append(order[n/2:], order[:n/2]...), 0
	}, 0},
}

// apply makes the catalog after c from base (which it leaves as it is): mark changes a
// document, added makes the k-th new one.
func apply[T any](c reuseChange, base []T, mark func(d *T, i int), added func(k int) T) []T {
	docs := slices.Clone(base)
	order, n := c.change(len(docs), func(i int) { mark(&docs[i], i) })
	next := make([]T, 0, len(order)+n)
	for _, i := range order {
		next = append(next, docs[i])
	}
	for k := range n {
		next = append(next, added(k))
	}
	return next
}

func seq(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// TestCorpusUpdateTokenizesOnlyChanged: an update tokenizes the documents that are new
// or changed and none of the others; a first build tokenizes all of them on any number
// of goroutines.
func TestCorpusUpdateTokenizesOnlyChanged(t *testing.T) {
	base := seedDocs(readTools(t, sealtoolsTools))
	for _, procs := range []int{1, 4} {
		if got := (&Corpus{}).update(base, procs); got.tokenized != len(base) {
			t.Fatalf("a first build on %d goroutines tokenized %d documents, want %d", procs, got.tokenized, len(base))
		}
	}
	old := NewCorpus(base)
	for _, tc := range reuseChanges {
		t.Run(tc.name, func(t *testing.T) {
			next := apply(tc, base, func(d *Doc, i int) { d.Summary += " reuse marker " + strconv.Itoa(i) },
				func(k int) Doc {
					return Doc{Name: "reuse_added_" + strconv.Itoa(k), Summary: "a tool added by the test"}
				})
			got := old.Update(next)
			if got.tokenized != tc.want {
				t.Errorf("the update tokenized %d of %d documents, want %d", got.tokenized, len(next), tc.want)
			}
			// A reused tokenization must still be the document's own.
			fresh := NewCorpus(next)
			for i := range next {
				if diff := cmp.Diff(fresh.DocTerms(i), got.DocTerms(i)); diff != "" {
					t.Fatalf("doc %d (-fresh +updated):\n%s", i, diff)
				}
			}
		})
	}
}

// TestRankerUpdateAnalyzesOnlyChanged: Ranker.Update analyzes the tools that are new or
// changed and carries the others, in both modes.
func TestRankerUpdateAnalyzesOnlyChanged(t *testing.T) {
	base := rankDocs(readTools(t, sealtoolsTools)[:2000], true)
	for _, opts := range []RankerOptions{{}, {Reference: true}} {
		t.Run("reference="+strconv.FormatBool(opts.Reference), func(t *testing.T) { rankerReuse(t, base, opts) })
	}
}

func rankerReuse(t *testing.T, base []RankDoc, opts RankerOptions) {
	old := NewRanker(base, opts)
	if old.analyzed != len(base) {
		t.Fatalf("a first build analyzed %d documents, want %d", old.analyzed, len(base))
	}
	for _, tc := range reuseChanges {
		t.Run(tc.name, func(t *testing.T) {
			next := apply(tc, base, func(d *RankDoc, i int) { d.Description += " reuse marker " + strconv.Itoa(i) },
				func(k int) RankDoc {
					d := base[k]
					d.ID, d.Name = "reuse/added/"+strconv.Itoa(k), "reuse_added_"+strconv.Itoa(k)
					return d
				})
			got := old.Update(next)
			if got.analyzed != tc.want {
				t.Errorf("the update analyzed %d of %d documents, want %d", got.analyzed, len(next), tc.want)
			}
			for _, q := range []string{"reuse marker", "send an email", "weather forecast for a city"} {
				if diff := cmp.Diff(NewRanker(next, opts).Search(q, 10, nil), got.Search(q, 10, nil)); diff != "" {
					t.Fatalf("query %q (-fresh +updated):\n%s", q, diff)
				}
			}
		})
	}
}
