package search

import (
	"slices"
	"strings"
	"testing"
)

// FuzzRankerPasses: the three passes of a parallel build (each chunk's text read into word ids,
// the chunks' words and pairs merged and analyzed, the cells made from the ids) give every
// document the cells and field lengths, and every word and term the id, that one pass over
// all documents gives, and count the postings as postings does, for any text, in chunks that
// share words or do not.
func FuzzRankerPasses(f *testing.F) {
	for _, s := range []string{"", "Create a GitHub issue", "web_search x86-64 web_search", "café au lait CAFÉ",
		"a\xffb", "日本 語 ab日c", "the of and", "HTTPServer URLs getWeatherForecastDaily12345",
		"averyveryverylongwordthatgoespastfifteen and_a_long_snake_case_identifier_name", "x\ny\tz-w.v,u"} {
		f.Add(s, "query limit policies", 2)
	}
	f.Fuzz(func(t *testing.T, text, params string, cut int) {
		var docs []RankDoc
		for i := range 9 {
			d := RankDoc{ID: "srv__tool" + strings.Repeat("x", i%3), Name: "tool_" + text[:min(i, len(text))],
				Description: "Find the weather " + text, ParamText: params, Server: text}
			switch i % 3 {
			case 1:
				d.Description, d.Label, d.SchemaKeys = params+" "+text+" issue tracker", text, strings.Fields(params)
			case 2:
				d.Description = "Send an email to " + params + "\n\nThe body " + text
			}
			docs = append(docs, d)
		}
		nf := int(numFields)
		one := newNodmixAnalyzer()
		oneTerms := newTermTable(16)
		oneCells, oneLens := make([][]termCell, len(docs)), make([]float64, len(docs)*nf)
		one.prepare(docs, len(docs))
		analyzeRange(docs, 0, len(docs), one, &oneTerms, nil, nil, oneCells, oneLens, nf)
		one.freeze()

		cut = 1 + (cut%(len(docs)-2)+len(docs)-2)%(len(docs)-2) // 1 to len(docs)-2
		parts := []rankPart{{lo: 0, hi: cut}, {lo: cut, hi: cut + 1}, {lo: cut + 1, hi: len(docs)}}
		for k := range parts {
			parts[k].an = newNodmixAnalyzer()
		}
		par := newNodmixAnalyzer()
		parCells, parLens := make([][]termCell, len(docs)), make([]float64, len(docs)*nf)
		parTerms, counts := analyzeNodmixParallel(docs, par, parts, parCells, parLens, nf)
		par.freeze()

		same := func(what string, eq bool) {
			t.Helper()
			if !eq {
				t.Fatalf("%s differ (cut at %d)", what, cut)
			}
		}
		same("terms", slices.Equal(oneTerms.strs, parTerms.strs))
		same("cells", slices.EqualFunc(oneCells, parCells, slices.Equal))
		same("lengths", slices.Equal(oneLens, parLens))
		same("words", slices.EqualFunc(one.list, par.list, func(x, y *wordInfo) bool {
			return x.id == y.id && x.raw == y.raw && x.lower == y.lower && x.stop == y.stop &&
				slices.Equal(x.parts, y.parts) && slices.Equal(x.terms, y.terms)
		}))
		same("word terms", slices.Equal(one.hot, par.hot) && slices.Equal(one.tids, par.tids))
		same("document words", slices.EqualFunc(one.docWords, par.docWords, slices.Equal))
		same("vocabularies", slices.Equal(one.sorted, par.sorted) && slices.Equal(one.used, par.used))
		for _, info := range one.list {
			if got := par.cached(info.raw); got == nil || got.id != info.id {
				t.Fatalf("word %q not cached as %d", info.raw, info.id)
			}
		}
		for k, p := range parts { // as postings counts them
			n := make([]int32, parTerms.len())
			for _, cells := range parCells[p.lo:p.hi] {
				for j, c := range cells {
					if j == 0 || cells[j-1].term() != c.term() {
						n[c.term()]++
					}
				}
			}
			same("postings counts", slices.Equal(n, counts[k]))
		}
		for id, term := range oneTerms.strs {
			if got, ok := parTerms.find(term); !ok || got != int32(id) {
				t.Fatalf("term %q not found as %d", term, id)
			}
		}
	})
}
