package discovery

import (
	"context"
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
