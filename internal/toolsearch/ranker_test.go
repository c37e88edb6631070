package toolsearch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/benchtest"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/policy"
	"github.com/nodmix/nodmix/internal/search"
)

func searchFixture(t testing.TB, entries []catalog.Entry, pol dispatch.Policy, opts search.RankerOptions) *Runtime {
	t.Helper()
	snap, err := catalog.NewSnapshot(1, entries)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := NewIndex(snap, pol, SearchRanker(opts))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(Config{Index: ix, Pipeline: &dispatch.Pipeline{Policy: pol}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestGoldenSearch replays the golden `search "q" => [ids]` lines through the runtime with the
// reference ranker, and checks that nodmix's own ranker agrees on them.
func TestGoldenSearch(t *testing.T) {
	lines := goldenLines(t, goldenFile)
	for _, mode := range []struct {
		name string
		opts search.RankerOptions
	}{{"reference", search.RankerOptions{Reference: true}}, {"nodmix", search.RankerOptions{}}} {
		rt := searchFixture(t, goldenEntries(), nil, mode.opts)
		n := 0
		for _, l := range lines {
			rest, ok := strings.CutPrefix(l, "search ")
			if !ok {
				continue
			}
			q, wantText, ok := strings.Cut(rest, " => ")
			if !ok {
				t.Fatalf("unreadable golden line %q", l)
			}
			var query string
			var want []string
			if err := json.Unmarshal([]byte(q), &query); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(wantText), &want); err != nil {
				t.Fatal(err)
			}
			hits, err := rt.Search(query, 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, ids(hits)); diff != "" {
				t.Errorf("%s ranker, search %q (-golden +got):\n%s", mode.name, query, diff)
			}
			n++
		}
		if n != 11 {
			t.Fatalf("%d golden search lines, want 11", n)
		}
	}
}

// TestSearchRankerFiltersBeforeLimit: with the real ranker, denied tools take no place in the
// results.
func TestSearchRankerFiltersBeforeLimit(t *testing.T) {
	var entries []catalog.Entry
	for i := range 10 {
		entries = append(entries, builtin(fmt.Sprintf("deploy_%d", i), "Deploy the service to production", ""))
	}
	pol := policy.Rules{Deny: []string{"deploy_[0-7]"}}
	rt := searchFixture(t, entries, pol, search.RankerOptions{})
	hits, err := rt.Search("deploy service", 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"nodmix:core:deploy_8", "nodmix:core:deploy_9"}, ids(hits)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// benchCatalog returns about n tools from the retrieval sets (Seal-Tools, MetaTool), padded with
// renamed copies, and the Seal-Tools dev queries.
func benchCatalog(b testing.TB, n int) ([]catalog.Entry, []string) {
	b.Helper()
	var tools []catalog.Tool
	for _, set := range []string{"sealtools", "metatool"} {
		f, err := os.Open("../../testdata/bench/retrieval/" + set + "/tools.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		ts, err := catalog.ReadFile(f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		tools = append(tools, ts...)
	}
	var entries []catalog.Entry
	for i := 0; len(entries) < n; i++ {
		t := tools[i%len(tools)]
		if i >= len(tools) {
			t.ID = fmt.Sprintf("%s_copy%d", t.ID, i/len(tools))
			t.Name = fmt.Sprintf("%s_copy%d", t.Name, i/len(tools))
		}
		entries = append(entries, catalog.Entry{Tool: t, Exec: echoExec})
	}
	f, err := os.Open("../../testdata/bench/retrieval/sealtools/queries_dev.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var queries []string
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(queries) < 200 {
		var q struct{ Query string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			b.Fatal(err)
		}
		queries = append(queries, q.Query)
	}
	return entries, queries
}

// BenchmarkSearch5000 is one tool_search query over 5,000 tools through the runtime: exact tier,
// ranking, policy filter and compact descriptors of the hits.
func BenchmarkSearch5000(b *testing.B) { benchmarkSearch(b, 5000) }

// BenchmarkSearch10000 is BenchmarkSearch5000 over 10,000 tools.
func BenchmarkSearch10000(b *testing.B) { benchmarkSearch(b, 10000) }

func benchmarkSearch(b *testing.B, n int) {
	entries, queries := benchCatalog(b, n)
	for _, mode := range []struct {
		name string
		opts search.RankerOptions
	}{{"nodmix", search.RankerOptions{}}, {"reference", search.RankerOptions{Reference: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			rt := searchFixture(b, entries, policy.Rules{Deny: []string{"*_copy0"}}, mode.opts)
			for _, q := range queries { // fill the descriptor cache, as a long-lived index has
				_, _ = rt.Search(q, 8)
			}
			i := 0
			benchtest.LoopCPU(b, func() {
				if _, err := rt.Search(queries[i%len(queries)], 8); err != nil {
					b.Fatal(err)
				}
				i++
			})
		})
	}
}

// BenchmarkBatchSearch5000 is a tool_search call with four queries, shaped to its budgets.
func BenchmarkBatchSearch5000(b *testing.B) {
	entries, queries := benchCatalog(b, 5000)
	rt := searchFixture(b, entries, nil, search.RankerOptions{})
	exec := rt.executor(ToolSearch)
	args := make([]json.RawMessage, 0, len(queries)/4)
	for i := 0; i+4 <= len(queries); i += 4 {
		qs, _ := json.Marshal(map[string]any{"queries": []map[string]any{
			{"query": truncate(queries[i]), "limit": 5}, {"query": truncate(queries[i+1]), "limit": 5},
			{"query": truncate(queries[i+2]), "limit": 5}, {"query": truncate(queries[i+3]), "limit": 5},
		}})
		args = append(args, qs)
	}
	i := 0
	for b.Loop() {
		res, err := exec.Execute(b.Context(), catalog.Call{Args: args[i%len(args)]})
		if err != nil || res.IsError {
			b.Fatalf("%v %s", err, res.Text())
		}
		i++
	}
}

// truncate keeps a batch within its 512-byte query budget.
func truncate(q string) string { return catalog.PrefixUTF16(q, 100) }

// BenchmarkIndex5000 is building the index of a 5,000-tool snapshot (once per catalog change).
func BenchmarkIndex5000(b *testing.B) {
	entries, _ := benchCatalog(b, 5000)
	snap, err := catalog.NewSnapshot(1, entries)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := NewIndex(snap, nil, SearchRanker(search.RankerOptions{})); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndex10000 is building the index of a 10,000-tool snapshot.
func BenchmarkIndex10000(b *testing.B) {
	entries, _ := benchCatalog(b, 10000)
	snap, err := catalog.NewSnapshot(1, entries)
	if err != nil {
		b.Fatal(err)
	}
	benchtest.LoopCPU(b, func() {
		if _, err := NewIndex(snap, nil, SearchRanker(search.RankerOptions{})); err != nil {
			b.Fatal(err)
		}
	})
}

// changedServer returns entries with the tools of every 200th position (a server's worth at
// 10,000 tools) described anew, as when a server reconnects with changed tools.
func changedServer(entries []catalog.Entry, round int) []catalog.Entry {
	out := slices.Clone(entries)
	for i := 0; i < len(out); i += 200 {
		out[i].Tool.Description = fmt.Sprintf("%s (revision %d)", out[i].Tool.Description, round)
	}
	return out
}

// TestIndexCacheUpdate: the index IndexCache builds from the previous one when a server's tools
// change ranks exactly as one built afresh.
func TestIndexCacheUpdate(t *testing.T) {
	entries, queries := benchCatalog(t, 6000)
	cache := NewIndexCache(nil, SearchRanker(search.RankerOptions{}))
	for round := range 3 {
		snap, err := catalog.NewSnapshot(uint64(round+1), changedServer(entries, round))
		if err != nil {
			t.Fatal(err)
		}
		got, err := cache.Index(snap)
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewIndex(snap, nil, SearchRanker(search.RankerOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queries[:80] {
			if diff := cmp.Diff(want.ranker.Search(q, 10, nil), got.ranker.Search(q, 10, nil)); diff != "" {
				t.Fatalf("round %d, %q (-fresh +cached):\n%s", round, q, diff)
			}
		}
	}
}

// BenchmarkIndexUpdate10000 is the index build when one server's tools (50 of 10,000) changed:
// what a reconnect costs.
func BenchmarkIndexUpdate10000(b *testing.B) {
	entries, _ := benchCatalog(b, 10000)
	var snaps [2]*catalog.Snapshot
	for i := range snaps {
		snap, err := catalog.NewSnapshot(uint64(i+1), changedServer(entries, i))
		if err != nil {
			b.Fatal(err)
		}
		snaps[i] = snap
	}
	rank := SearchRanker(search.RankerOptions{})
	prev, err := NewIndex(snaps[0], nil, rank)
	if err != nil {
		b.Fatal(err)
	}
	i := 1
	benchtest.LoopCPU(b, func() {
		snap := snaps[i%2]
		ix, err := newIndex(snap, served(snap, nil), rank, prev)
		if err != nil {
			b.Fatal(err)
		}
		prev = ix
		i++
	})
}
