package search

import (
	"strconv"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/benchtest"
)

var benchSizes = []int{100, 1000, 10000}

// benchTools replicates the Seal-Tools catalog (4,076 tools) up to n tools. Copies get
// a distinct name and server so they are distinct documents, as mirrored or versioned
// servers would be.
func benchTools(b *testing.B, n int) []testTool {
	b.Helper()
	base := readTools(b, sealtoolsTools)
	out := make([]testTool, 0, n)
	for copyN := 0; len(out) < n; copyN++ {
		for _, tool := range base {
			if len(out) == n {
				break
			}
			if copyN > 0 {
				suffix := strconv.Itoa(copyN + 1)
				tool.ID += "_v" + suffix
				tool.Name += "V" + suffix
				tool.MCPToolName = tool.Name
				tool.Server += " mirror " + suffix
			}
			out = append(out, tool)
		}
	}
	return out
}

func benchQueries(b *testing.B) []string {
	b.Helper()
	qs := readQueryFile(b, sealtoolsQueries)
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Query
	}
	return out
}

func BenchmarkTokenize(b *testing.B) {
	docs := seedDocs(readTools(b, sealtoolsTools)[:200])
	var sc tokenScanner
	var bytes int64
	for _, d := range docs {
		bytes += int64(len(d.Summary))
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			sc.scan(d.Summary)
		}
	}
}

func BenchmarkBM25Build(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			docs := seedDocs(benchTools(b, n))
			benchtest.LoopCPU(b, func() { NewBM25(docs) })
		})
	}
}

// BenchmarkCorpusIndex is the rebuild after an activation: the corpus is tokenized
// once and the hidden subset (here all but every tenth document) is indexed again.
func BenchmarkCorpusIndex(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			c := NewCorpus(seedDocs(benchTools(b, n)))
			var subset []int
			for i := 0; i < n; i++ {
				if i%10 != 0 {
					subset = append(subset, i)
				}
			}
			benchtest.LoopCPU(b, func() {
				if _, err := c.Index(subset); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkBM25Search(b *testing.B) {
	queries := benchQueries(b)
	for _, n := range benchSizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ix := NewBM25(seedDocs(benchTools(b, n)))
			i := 0
			benchtest.LoopCPU(b, func() {
				if _, err := ix.Search(queries[i%len(queries)], 8); err != nil {
					b.Fatal(err)
				}
				i++
			})
		})
	}
}

// BenchmarkRanker measures the Tool Search ranker over 5,000 tools (the Seal-Tools
// catalog and a mirrored part of it) with the Seal-Tools dev queries.
func BenchmarkRanker(b *testing.B) {
	queries := benchQueries(b)
	docs := rankDocs(benchTools(b, 5000), true)
	for _, mode := range []struct {
		name string
		opts RankerOptions
	}{{"nodmix", RankerOptions{}}, {"reference", RankerOptions{Reference: true}}} {
		b.Run("build/"+mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				NewRanker(docs, mode.opts)
			}
		})
		b.Run("search/"+mode.name, func(b *testing.B) {
			r := NewRanker(docs, mode.opts)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Search(queries[i%len(queries)], 8, nil)
				i++
			}
		})
	}
}

// BenchmarkStraightforwardBM25 times refBM25, the seed's formula written the plain way (a map
// per document, a scan of every document per query) with nodmix's tokenizer, so that the
// index's gain can be read as a ratio measured in the same run as BenchmarkBM25Build and
// BenchmarkBM25Search.
func BenchmarkStraightforwardBM25(b *testing.B) {
	queries := benchQueries(b)
	for _, n := range benchSizes {
		docs := seedDocs(benchTools(b, n))
		b.Run("build/"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				newRefBM25(docs)
			}
		})
		b.Run("search/"+strconv.Itoa(n), func(b *testing.B) {
			r := newRefBM25(docs)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := r.search(queries[i%len(queries)], 8); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkBM25LongQuery is a search for a long query: every distinct term
// of 10,000 tools (the Seal-Tools catalog, mirrored), five times over.
func BenchmarkBM25LongQuery(b *testing.B) {
	docs := seedDocs(benchTools(b, 10000))
	ix := NewBM25(docs)
	var words []string
	seen := map[string]bool{}
	for _, d := range docs {
		for _, tok := range Tokenize(d.Name + " " + d.Summary) {
			if !seen[tok] {
				seen[tok] = true
				words = append(words, tok)
			}
		}
	}
	q := strings.Repeat(strings.Join(words, " ")+" ", 5)
	b.Logf("%d distinct terms, %d bytes", len(words), len(q))
	benchtest.LoopCPU(b, func() {
		if _, err := ix.Search(q, 8); err != nil {
			b.Fatal(err)
		}
	})
}
