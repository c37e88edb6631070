package search

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fixtureDocs are the seed's four test tools as the upstream test builds them: the
// label when there is one, else the name; the summary is the description; schema keys
// in fixture order.
func fixtureDocs(t testing.TB) []Doc {
	tools := readTools(t, ompFixturePath)
	docs := make([]Doc, len(tools))
	for i, tool := range tools {
		docs[i] = seedDoc(tool)
		if tool.Label != "" {
			docs[i].Label = tool.Label
		}
		docs[i].SchemaKeys = tool.propOrder
	}
	return docs
}

func TestBM25GoldenIndex(t *testing.T) {
	docs := fixtureDocs(t)
	ix := NewBM25(docs)
	lines := goldenSections(t, ompGoldenPath)["index"]
	if len(lines) != 1+len(docs) {
		t.Fatalf("golden index has %d lines, want %d", len(lines), 1+len(docs))
	}
	wantAvg, err := strconv.ParseFloat(strings.TrimPrefix(lines[0], "averageLength "), 64)
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.DocFreq("github"); got != 2 {
		t.Errorf("DocFreq(github) = %d, want 2", got)
	}
	if got := ix.DocFreq("absent"); got != 0 {
		t.Errorf("DocFreq(absent) = %d, want 0", got)
	}
	if ix.AvgLen() != wantAvg {
		t.Errorf("AvgLen() = %v, want %v", ix.AvgLen(), wantAvg)
	}
	c := ix.Corpus()
	for i, line := range lines[1:] {
		fields := strings.SplitN(line, " ", 4)
		if len(fields) != 4 || fields[1] != "len" {
			t.Fatalf("malformed golden index line %q", line)
		}
		if fields[0] != docs[i].Name {
			t.Fatalf("golden line %d names %q, fixture has %q", i, fields[0], docs[i].Name)
		}
		wantLen, _ := strconv.Atoi(fields[2])
		if got := c.DocLen(i); got != wantLen {
			t.Errorf("%s: DocLen = %d, want %d", fields[0], got, wantLen)
		}
		var pairs [][]any
		if err := json.Unmarshal([]byte(fields[3]), &pairs); err != nil {
			t.Fatal(err)
		}
		var want []TermFreq
		for _, p := range pairs {
			want = append(want, TermFreq{Term: p[0].(string), Freq: int(p[1].(float64))})
		}
		if diff := cmp.Diff(want, c.DocTerms(i)); diff != "" {
			t.Errorf("%s: DocTerms mismatch (-want +got):\n%s", fields[0], diff)
		}
	}
}

func TestBM25GoldenSearch(t *testing.T) {
	docs := fixtureDocs(t)
	ix := NewBM25(docs)
	lines := goldenSections(t, ompGoldenPath)["search vectors (name, score rounded 6dp as in details)"]
	if len(lines) < 10 {
		t.Fatalf("golden file has %d search vectors, want at least 10", len(lines))
	}
	for _, line := range lines {
		if q, msg, ok := strings.Cut(line, " THROWS "); ok {
			var query string
			if err := json.Unmarshal([]byte(q), &query); err != nil {
				t.Fatal(err)
			}
			_, err := ix.Search(query, len(docs))
			if !errors.Is(err, ErrNoTokens) || err.Error() != msg {
				t.Errorf("Search(%q) error = %v, want %q", query, err, msg)
			}
			continue
		}
		q, out, ok := strings.Cut(line, " => ")
		if !ok {
			t.Fatalf("malformed golden line %q", line)
		}
		var query string
		var pairs [][]any
		if err := json.Unmarshal([]byte(q), &query); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &pairs); err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(query, len(docs))
		if err != nil {
			t.Fatalf("Search(%q): %v", query, err)
		}
		if len(hits) != len(pairs) {
			t.Errorf("Search(%q) = %s; want %v", query, fmtHits(hits, func(i int) string { return docs[i].Name }), pairs)
			continue
		}
		for k, p := range pairs {
			name, score := p[0].(string), p[1].(float64)
			got := hits[k]
			if docs[got.Index].Name != name || math.Abs(got.Score-score) > 5e-7 {
				t.Errorf("Search(%q)[%d] = %s %.6f, want %s %.6f", query, k, docs[got.Index].Name, got.Score, name, score)
			}
		}
	}
}

func TestBM25EmptyAndErrors(t *testing.T) {
	empty := NewBM25(nil)
	if _, err := empty.Search("...", 8); !errors.Is(err, ErrNoTokens) {
		t.Errorf("empty index, no tokens: err = %v, want ErrNoTokens", err)
	}
	hits, err := empty.Search("github", 8)
	if err != nil || hits != nil {
		t.Errorf("empty index: Search = %v, %v; want nil, nil", hits, err)
	}
	c := NewCorpus(fixtureDocs(t))
	for _, subset := range [][]int{{0, 4}, {-1}, {1, 2, 1}} {
		if _, err := c.Index(subset); err == nil {
			t.Errorf("Index(%v): no error", subset)
		}
	}
	ix, err := c.Index([]int{})
	if err != nil || ix.Len() != 0 || ix.AvgLen() != 1 {
		t.Errorf("Index([]) = len %d avg %v err %v; want an empty index with averageLength 1", ix.Len(), ix.AvgLen(), err)
	}
	// A corpus of empty documents: the seed's `0/N || 1` average.
	blank := NewBM25([]Doc{{}, {}})
	if blank.AvgLen() != 1 {
		t.Errorf("blank docs AvgLen = %v, want 1", blank.AvgLen())
	}
	if hits, err := blank.Search("x", 3); err != nil || len(hits) != 0 {
		t.Errorf("blank docs Search = %v, %v; want no hits", hits, err)
	}
}

func TestBM25TiesByteOrder(t *testing.T) {
	// Identical documents score the same; ties go by name in byte order, then by
	// subset order for equal names.
	docs := []Doc{
		{Name: "b", Label: "alpha"},
		{Name: "B", Label: "alpha"},
		{Name: "a", Label: "alpha"},
		{Name: "b", Label: "alpha"},
	}
	c := NewCorpus(docs)
	ix, err := c.Index([]int{3, 0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search("alpha", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, h := range hits {
		got = append(got, h.Index)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 0}, got); diff != "" {
		t.Errorf("tie order mismatch (-want +got):\n%s", diff)
	}
}

func TestBM25SubsetMatchesReference(t *testing.T) {
	tools := readTools(t, sealtoolsTools)
	docs := seedDocs(tools[:600])
	queries := readQueryFile(t, sealtoolsQueries)[:60]
	c := NewCorpus(docs)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 4; round++ {
		subset := rng.Perm(len(docs))[:100+rng.IntN(400)]
		ix, err := c.Index(subset)
		if err != nil {
			t.Fatal(err)
		}
		sub := make([]Doc, len(subset))
		for p, i := range subset {
			sub[p] = docs[i]
		}
		ref := newRefBM25(sub)
		for _, q := range queries {
			all, wantErr := ref.search(q.Query, 0)
			for k := range all {
				all[k].Index = subset[all[k].Index]
			}
			for _, limit := range []int{0, 1, 5} {
				want := all
				if limit > 0 && len(want) > limit {
					want = want[:limit]
				}
				got, err := ix.Search(q.Query, limit)
				if (err != nil) != (wantErr != nil) {
					t.Fatalf("Search(%q) err = %v, want %v", q.Query, err, wantErr)
				}
				if !cmp.Equal(want, got) {
					t.Fatalf("round %d Search(%q, %d):\n got %v\nwant %v", round, q.Query, limit, got, want)
				}
			}
		}
	}
}

func TestBM25SearchFuncFiltersBeforeLimit(t *testing.T) {
	ix := NewBM25(fixtureDocs(t))
	all, _ := ix.Search("github", 0)
	if len(all) != 2 {
		t.Fatalf("Search(github) = %v, want 2 hits", all)
	}
	got, err := ix.SearchFunc("github", 1, func(i int) bool { return i != all[0].Index })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Hit{all[1]}, got); diff != "" {
		t.Errorf("SearchFunc mismatch (-want +got):\n%s", diff)
	}
}

func TestCorpusUpdateReusesAndMatches(t *testing.T) {
	tools := readTools(t, sealtoolsTools)
	before := seedDocs(tools[:300])
	after := append(seedDocs(tools[100:300]), seedDocs(tools[300:400])...)
	after[5].Summary = "Changed summary of a document that kept its name"
	old := NewCorpus(before)
	updated := old.Update(after)
	fresh := NewCorpus(after)
	if updated.Len() != len(after) {
		t.Fatalf("Update().Len() = %d, want %d", updated.Len(), len(after))
	}
	for i := range after {
		if diff := cmp.Diff(fresh.DocTerms(i), updated.DocTerms(i)); diff != "" {
			t.Fatalf("doc %d terms differ after Update (-fresh +updated):\n%s", i, diff)
		}
		if fresh.DocLen(i) != updated.DocLen(i) {
			t.Fatalf("doc %d length %d after Update, want %d", i, updated.DocLen(i), fresh.DocLen(i))
		}
	}
	// The old corpus is untouched.
	again := NewCorpus(before)
	for i := range before {
		if !cmp.Equal(again.DocTerms(i), old.DocTerms(i)) {
			t.Fatalf("Update modified the old corpus at doc %d", i)
		}
	}
}

// A large corpus is tokenized on several goroutines; the result must not differ from
// one goroutine's.
func TestCorpusParallelMatchesSequential(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	base := readTools(t, sealtoolsTools)
	var docs []Doc
	for copyN := 0; len(docs) < 9000; copyN++ {
		for _, d := range seedDocs(base) {
			if copyN > 0 {
				d.Name += "V" + strconv.Itoa(copyN)
				d.Summary += " copy " + strconv.Itoa(copyN)
			}
			docs = append(docs, d)
		}
	}
	parallel := NewCorpus(docs)
	// Batches under the worker threshold stay on one goroutine.
	sequential := NewCorpus(nil)
	for n := 1500; ; n += 1500 {
		sequential = sequential.Update(docs[:min(n, len(docs))])
		if n >= len(docs) {
			break
		}
	}
	for i := range docs {
		if !cmp.Equal(sequential.DocTerms(i), parallel.DocTerms(i)) || sequential.DocLen(i) != parallel.DocLen(i) {
			t.Fatalf("doc %d differs between the parallel and the sequential build", i)
		}
	}
	a, _ := parallel.Index(nil)
	b, _ := sequential.Index(nil)
	for _, q := range readQueryFile(t, sealtoolsQueries)[:30] {
		ha, _ := a.Search(q.Query, 10)
		hb, _ := b.Search(q.Query, 10)
		if !cmp.Equal(ha, hb) {
			t.Fatalf("Search(%q) differs: %v vs %v", q.Query, ha, hb)
		}
	}
}

func TestBM25SearchAllocations(t *testing.T) {
	tools := readTools(t, sealtoolsTools)
	ix := NewBM25(seedDocs(tools))
	query := "Find available rooms in New York and get the weather forecast for the data"
	hits, _ := ix.Search(query, 10)
	if len(hits) != 10 {
		t.Fatalf("got %d hits, want 10", len(hits))
	}
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	// One allocation for the returned hits; nothing per scored document.
	if allocs := testing.AllocsPerRun(50, func() { _, _ = ix.Search(query, 10) }); allocs > 1 {
		t.Errorf("Search allocated %v times per call, want at most 1", allocs)
	}
}

// TestIndexWorkersAgree: an index built on 1, 2 or 4 goroutines, over all of a corpus or
// a subset, is the same index.
func TestIndexWorkersAgree(t *testing.T) {
	docs := workerDocs(t, false)
	c := NewCorpus(docs)
	var subset []int
	for i := len(docs) - 1; i >= 0; i-- {
		if i%10 != 3 {
			subset = append(subset, i)
		}
	}
	for _, sub := range [][]int{nil, subset} {
		index := func(procs int) *BM25 {
			ix, err := c.Index(sub)
			if err != nil {
				t.Fatal(err)
			}
			ix.build(procs) // again, on procs goroutines
			return ix
		}
		want := index(1)
		for _, procs := range []int{2, 4} {
			got := index(procs)
			if got.avgLen != want.avgLen || !slices.Equal(got.start, want.start) || !slices.Equal(got.post, want.post) ||
				!slices.Equal(got.norm, want.norm) {
				t.Fatalf("the index on %d goroutines differs from the index on one", procs)
			}
		}
	}
}

// A query with many distinct terms, each many times, past the count where its terms are
// found through an index rather than a scan: counts and order of first occurrence are the
// same either way, and so the hits. The searches after it, on scratch that held it, are
// unaffected.
func TestBM25LongQueryMatchesReference(t *testing.T) {
	tools := readTools(t, sealtoolsTools)
	docs := seedDocs(tools[:400])
	ix := NewBM25(docs)
	ref := newRefBM25(docs)
	var words []string
	seen := map[string]bool{}
	for _, d := range docs[:150] {
		for _, tok := range Tokenize(d.Summary) {
			if !seen[tok] {
				seen[tok] = true
				words = append(words, tok)
			}
		}
	}
	if len(words) < 4*queryIndexFrom {
		t.Fatalf("%d distinct words, want at least %d", len(words), 4*queryIndexFrom)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var long []string
	for range 5 {
		long = append(long, words...)
		rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	}
	queries := []string{strings.Join(long, " "), words[0], strings.Join(words[:queryIndexFrom+1], " "), "github issue"}
	for _, q := range append(queries, queries...) {
		want, wantErr := ref.search(q, 0)
		got, err := ix.Search(q, 0)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Search(%.40q) err = %v, want %v", q, err, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Search(%.40q) mismatch (-want +got):\n%s", q, diff)
		}
	}
}
