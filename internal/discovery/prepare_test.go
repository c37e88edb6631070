package discovery

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/search"
	"github.com/nodmix/nodmix/internal/session"
)

func fixtureSnapshot(t *testing.T) *catalog.Snapshot {
	t.Helper()
	f, err := os.Open("../../testdata/reference/golden/omp-bm25-fixture.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tools, err := catalog.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	entries := make([]catalog.Entry, len(tools))
	for i, tool := range tools {
		entries[i] = catalog.Entry{Tool: tool}
	}
	snap, err := catalog.NewSnapshot(1, entries)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestPrepare: Prepare tokenizes the snapshot and indexes a new session's corpus, which a new
// session's first search then uses as it is; with discovery off it does nothing.
func TestPrepare(t *testing.T) {
	snap := fixtureSnapshot(t)
	off := NewService(Rules{Mode: Off}, session.NewMemory(), nil)
	if err := off.Prepare(snap); err != nil || off.corpusAt != nil || len(off.cache) != 0 {
		t.Errorf("discovery off: Prepare = %v, corpus at %p, %d indexes; want nothing done", err, off.corpusAt, len(off.cache))
	}

	s := NewService(Rules{Mode: All, Everything: true}, session.NewMemory(), nil)
	if err := s.Prepare(snap); err != nil {
		t.Fatal(err)
	}
	if s.corpusAt != snap || len(s.cache) != 1 {
		t.Fatalf("after Prepare: corpus at %p (want %p), %d indexes (want 1)", s.corpusAt, snap, len(s.cache))
	}
	tokens := s.tokens
	var prepared *search.BM25
	for _, ix := range s.cache {
		prepared = ix
	}
	d, err := s.Search(context.Background(), snap, "new", "read a file", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tools) == 0 {
		t.Error("the search after Prepare found nothing")
	}
	if s.tokens != tokens || len(s.cache) != 1 {
		t.Errorf("the first search tokenized or indexed again: %d indexes", len(s.cache))
	}
	for _, ix := range s.cache {
		if ix != prepared {
			t.Error("the first search replaced the prepared index")
		}
	}
}

// TestIndexCacheBounds: the cached indexes hold at most maxDocs documents together and at most
// maxCachedIndexes indexes, the oldest going first, and the newest is kept whatever its size.
func TestIndexCacheBounds(t *testing.T) {
	const n = 40
	entries := make([]catalog.Entry, n)
	for i := range entries {
		entries[i] = catalog.Entry{Tool: catalog.Tool{ID: fmt.Sprintf("mcp:s:t%d", i), Name: fmt.Sprintf("t%d", i), Description: "a tool"}}
	}
	snap, err := catalog.NewSnapshot(1, entries)
	if err != nil {
		t.Fatal(err)
	}
	s := NewService(Rules{Mode: All, Everything: true}, session.NewMemory(), nil)
	s.maxDocs = 3 * (n - 1)
	without := func(skip int) []int {
		var subset []int
		for i := range n {
			if i != skip {
				subset = append(subset, i)
			}
		}
		return subset
	}
	for skip := range 5 {
		if _, err := s.index(snap, without(skip)); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.cache) != 3 || s.cachedDocs != 3*(n-1) {
		t.Fatalf("after five indexes of %d documents: %d cached, %d documents; want 3, %d", n-1, len(s.cache), s.cachedDocs, 3*(n-1))
	}
	for skip := range 5 {
		if _, cached := s.cache[subsetKey(without(skip))]; cached != (skip >= 2) {
			t.Errorf("index without %d cached: %v; want only the latest three", skip, cached)
		}
	}
	s.maxDocs = 1
	if _, err := s.index(snap, without(-1)); err != nil {
		t.Fatal(err)
	}
	if _, cached := s.cache[subsetKey(without(-1))]; len(s.cache) != 1 || !cached {
		t.Errorf("past the bound: %d cached; want the newest alone", len(s.cache))
	}
	s.maxDocs = 1 << 30
	for k := range maxCachedIndexes + 5 { // distinct subsets: {k}, then {0, k-n+1}
		subset := []int{k}
		if k >= n {
			subset = []int{0, k - n + 1}
		}
		if _, err := s.index(snap, subset); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.cache) != maxCachedIndexes || len(s.order) != maxCachedIndexes {
		t.Errorf("%d cached, %d in order; want %d", len(s.cache), len(s.order), maxCachedIndexes)
	}
}
