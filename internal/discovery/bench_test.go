package discovery

import (
	"bytes"
	"testing"

	"github.com/nodmix/nodmix/internal/benchtest"
	"github.com/nodmix/nodmix/internal/catalog"
)

// benchSnapshot is a snapshot of the n-tool benchmark catalog.
func benchSnapshot(b *testing.B, n int) *catalog.Snapshot {
	b.Helper()
	tools, err := catalog.ReadFile(bytes.NewReader(benchtest.CatalogFile(b, n)))
	if err != nil {
		b.Fatal(err)
	}
	entries := make([]catalog.Entry, len(tools))
	for i, t := range tools {
		entries[i] = catalog.Entry{Tool: t}
	}
	snap, err := catalog.NewSnapshot(1, entries)
	if err != nil {
		b.Fatal(err)
	}
	return snap
}

// BenchmarkDocsOf10000 is discovery's own part of its first index of a 10,000-tool catalog: the
// seed's documents of the tools (labels, summaries, schema keys).
func BenchmarkDocsOf10000(b *testing.B) {
	entries := benchSnapshot(b, 10000).Entries()
	benchtest.LoopCPU(b, func() { docsOf(entries) })
}

// BenchmarkIndex10000 is a whole discovery build from the tools of a new catalog version, as the
// first search after it runs it: documents, tokenization and the index over every tool.
func BenchmarkIndex10000(b *testing.B) {
	snap := benchSnapshot(b, 10000)
	all := make([]int, len(snap.Entries()))
	for i := range all {
		all[i] = i
	}
	benchtest.LoopCPU(b, func() {
		if _, err := NewService(Rules{}, nil, nil).index(snap, all); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkIndexUpdate10000 is the discovery index after one server's 50 tools changed in a
// 10,000-tool catalog (a reconnect): the catalog alternates between two versions that differ
// in those tools, and every search after a change rebuilds the index.
func BenchmarkIndexUpdate10000(b *testing.B) {
	snaps := [2]*catalog.Snapshot{benchSnapshot(b, 10000)}
	entries := make([]catalog.Entry, 0, 10000)
	for i, e := range snaps[0].Entries() {
		c := *e
		if i%200 == 0 {
			c.Tool.Description += " (version 2)"
		}
		entries = append(entries, c)
	}
	var err error
	if snaps[1], err = catalog.NewSnapshot(2, entries); err != nil {
		b.Fatal(err)
	}
	all := make([]int, len(entries))
	for i := range all {
		all[i] = i
	}
	s := NewService(Rules{}, nil, nil)
	if _, err := s.index(snaps[0], all); err != nil {
		b.Fatal(err)
	}
	i := 1
	benchtest.LoopCPU(b, func() {
		if _, err := s.index(snaps[i%2], all); err != nil {
			b.Fatal(err)
		}
		i++
	})
}
