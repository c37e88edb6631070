package search

import (
	"slices"
	"strings"
	"testing"
)

// termOccurrences lists a document's terms as docAccum holds them: in order of first
// occurrence, each with its counts by field.
type termOccurrence struct {
	term   string
	counts [maxFields]float32
}

// docTermIDsOf is what docTermIDs gives for d, with the term ids read back as terms.
func docTermIDsOf(a *nodmixAnalyzer, terms *termTable, d *RankDoc) ([]termOccurrence, []float64) {
	acc := docAccum{lens: make([]float64, numFields)}
	acc.slot = make([]int32, terms.len())
	a.docTermIDs(d, func(term string) int32 {
		id, added := terms.intern(term)
		if added {
			acc.slot = append(acc.slot, 0)
		}
		return id
	}, &acc)
	var out []termOccurrence
	for _, tc := range acc.acc {
		acc.slot[tc.term] = 0
		out = append(out, termOccurrence{term: terms.strs[tc.term], counts: tc.counts})
	}
	return out, acc.lens
}

// docTermsOf is what docTerms gives for d: the string path, with no word cache.
func docTermsOf(d *RankDoc) ([]termOccurrence, []float64) {
	var out []termOccurrence
	lens := make([]float64, numFields)
	newNodmixAnalyzer().docTerms(d, func(f int, term string, w float64) {
		k := slices.IndexFunc(out, func(o termOccurrence) bool { return o.term == term })
		if k < 0 {
			out = append(out, termOccurrence{term: term})
			k = len(out) - 1
		}
		out[k].counts[f] += float32(w)
		lens[f] += w
	})
	return out, lens
}

// FuzzDocTermIDs: the build's word loop (words found eight bytes at a time, looked up by
// their packed bytes, analyzed once and cached) gives every document the terms, counts and
// field lengths the plain string path gives it, whether its words are new or cached.
func FuzzDocTermIDs(f *testing.F) {
	for _, s := range []string{"", "Create a GitHub issue", "web_search x86-64 web_search", "café au lait CAFÉ",
		"a\xffb", "日本 語 ab日c", "  x  ", "HTTPServer URLs getWeatherForecastDaily12345", "policies cookies the of",
		"averyveryverylongwordthatgoespastfifteen and_a_long_snake_case_identifier_name", "0123456789abcdef",
		"ABCDEFGHIJKLMNOP qrstuvwxyz_0", "x\ny\tz-w.v,u",
		"weather the forecasts get_weather_forecasts GetTheWeather cities get_cities"} { // parts met alone first
		f.Add(s, "query limit")
	}
	f.Fuzz(func(t *testing.T, desc, params string) {
		docs := []RankDoc{
			{ID: "srv__" + desc, Name: desc, Description: desc, ParamText: params, SchemaKeys: strings.Fields(params)},
			{ID: "second", Name: params, Label: desc, Description: params + " " + desc, Server: desc},
		}
		a := newNodmixAnalyzer()
		a.prepare(docs, len(docs))
		terms := newTermTable(16)
		for round := range 2 { // new words, then cached ones
			for i := range docs {
				got, gotLens := docTermIDsOf(a, &terms, &docs[i])
				want, wantLens := docTermsOf(&docs[i])
				if !slices.Equal(got, want) || !slices.Equal(gotLens, wantLens) {
					t.Fatalf("round %d, document %d: docTermIDs\n%v %v\ndocTerms\n%v %v", round, i, got, gotLens, want, wantLens)
				}
			}
		}
	})
}

// TestPackASCII: packASCII packs as packWord does, next to the end of the text or not.
func TestPackASCII(t *testing.T) {
	s := "abcdefghijklmnopqrstuvwxyz0123456789"
	for i := range len(s) {
		for n := 1; n <= 15 && i+n <= len(s); n++ {
			want, _ := packWord(s[i : i+n])
			if k0, k1 := packASCII(s, i, n); [2]uint64{k0, k1} != want {
				t.Fatalf("packASCII(%q) = %x %x, want %x", s[i:i+n], k0, k1, want)
			}
		}
	}
}

// TestVocabSet: the set keeps each word once through its growth, finds exactly its words,
// and sorts them.
func TestVocabSet(t *testing.T) {
	s := newVocabSet(0)
	var want []string
	for i := range 5000 {
		w := strings.Repeat("ab", i%7) + string(rune('a'+i%26)) + strings.Repeat("z", i%11)
		if !slices.Contains(want, w) {
			want = append(want, w)
		}
		s.add(w)
		s.add(w)
	}
	slices.Sort(want)
	if got := s.sorted(); !slices.Equal(got, want) {
		t.Fatalf("sorted: %d words, want %d", len(got), len(want))
	}
	for _, w := range want {
		if !s.has(w) || s.has(w+"!") {
			t.Fatalf("has(%q) is wrong", w)
		}
	}
	var empty vocabSet
	if empty.has("") {
		t.Fatal("an empty set has a word")
	}
}
