package discovery

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
)

var benchIDKey = regexp.MustCompile(`"(id|name)":\s*"`)

// benchSnapshot is a snapshot of n tools from the retrieval sets (Seal-Tools, MetaTool), padded
// with copies under new ids and names, as the catalog's benchmarks build it.
func benchSnapshot(b *testing.B, n int) *catalog.Snapshot {
	b.Helper()
	var lines [][]byte
	for _, set := range []string{"sealtools", "metatool"} {
		data, err := os.ReadFile("../../testdata/bench/retrieval/" + set + "/tools.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
	}
	var file bytes.Buffer
	for i := range n {
		l := lines[i%len(lines)]
		if i >= len(lines) {
			l = benchIDKey.ReplaceAll(l, fmt.Appendf(nil, `"$1": "copy%d_`, i/len(lines)))
		}
		file.Write(l)
		file.WriteByte('\n')
	}
	tools, err := catalog.ReadFile(&file)
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
	loopCPU(b, func() { docsOf(entries) })
}

// BenchmarkIndex10000 is a whole discovery build from the tools of a new catalog version, as the
// first search after it runs it: documents, tokenization and the index over every tool.
func BenchmarkIndex10000(b *testing.B) {
	snap := benchSnapshot(b, 10000)
	all := make([]int, len(snap.Entries()))
	for i := range all {
		all[i] = i
	}
	loopCPU(b, func() {
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
	loopCPU(b, func() {
		if _, err := s.index(snaps[i%2], all); err != nil {
			b.Fatal(err)
		}
		i++
	})
}

// loopCPU runs op in b.Loop and reports its CPU time per operation (user and system, steadier
// than wall time on a shared machine) as cpu-ns/op.
func loopCPU(b *testing.B, op func()) {
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
