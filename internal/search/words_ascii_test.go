package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzSplitWordsASCII: the ASCII fast path of splitWords splits exactly as the rune path.
func FuzzSplitWordsASCII(f *testing.F) {
	for _, s := range []string{
		"", "web_search", "HTTPServer", "getURLs URLsx", "x86_64 mcp__gh__create", "GitHub a-b c",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ", "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgHiJ 1a2b3c4d5e6f7g8h9i0j",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !isASCII(s) {
			return
		}
		var buf []rune
		want := splitWordsRunes(nil, s, &buf)
		if got := splitWordsASCII(nil, s); !slices.Equal(got, want) {
			t.Fatalf("splitWordsASCII(%q) = %q, want %q", s, got, want)
		}
		if got, want := jsLower(s), lowerString([]rune(s)); got != want {
			t.Fatalf("jsLower(%q) = %q, want %q", s, got, want)
		}
	})
}

// TestIsNodmixStopWord: the packed set answers as the map does, for the stop words and for
// words next to them (longer, shorter, in capitals, with a byte past ASCII).
func TestIsNodmixStopWord(t *testing.T) {
	for w := range nodmixStopWords {
		for _, v := range []string{w, w + "s", w[1:], w[:len(w)-1], strings.ToUpper(w), w + "\xff", "\xc3\xa9" + w, w + w} {
			if got, want := isNodmixStopWord(v), nodmixStopWords[v]; got != want {
				t.Errorf("isNodmixStopWord(%q) = %v, want %v", v, got, want)
			}
		}
	}
	for _, v := range []string{"", "yourselvesx", "\x00", "abcdefghij", "the\x00"} {
		if isNodmixStopWord(v) {
			t.Errorf("isNodmixStopWord(%q) = true", v)
		}
	}
}

func TestMaxStopWordLen(t *testing.T) {
	n := 0
	for w := range nodmixStopWords {
		n = max(n, len(w))
	}
	if n != maxStopWordLen {
		t.Errorf("the longest stop word has %d bytes, maxStopWordLen is %d", n, maxStopWordLen)
	}
	for w := range nonPluralS {
		if !strings.HasSuffix(w, "s") {
			t.Errorf("nonPluralS has %q, which does not end in s", w)
		}
	}
}

func TestSuffixesEndingIn(t *testing.T) {
	for c := range 256 {
		var want []string
		for _, suf := range stemSuffixes {
			if suf[len(suf)-1] == byte(c) {
				want = append(want, suf)
			}
		}
		if got := suffixesEndingIn(byte(c)); !slices.Equal(got, want) {
			t.Errorf("suffixesEndingIn(%q) = %q, want %q", byte(c), got, want)
		}
	}
}

// FuzzRawWords: rawWords, with its ASCII loops, splits as the rune loop does.
func FuzzRawWords(f *testing.F) {
	for _, s := range []string{"", "web_search x86-64", "café au lait", "a\xffb", "日本 語", "ab日c d", "  x  "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := rawWords(nil, s), rawWordsRunes(nil, s, 0); !slices.Equal(got, want) {
			t.Fatalf("rawWords(%q) = %q, want %q", s, got, want)
		}
	})
}

// TestTermSet: a termSet gives the terms, order and weights of a scan of every term set so far,
// across the point where it starts to keep an index.
func TestTermSet(t *testing.T) {
	naive := func(ops []termOp) []weightedTerm {
		var out []weightedTerm
	next:
		for _, op := range ops {
			for i := range out {
				if out[i].term == op.term {
					if !op.keepMax || op.weight > out[i].weight {
						out[i].weight = op.weight
					}
					continue next
				}
			}
			out = append(out, weightedTerm{term: op.term, weight: op.weight})
		}
		return out
	}
	for _, n := range []int{1, indexFrom - 1, indexFrom, indexFrom + 1, 5 * indexFrom} {
		var ops []termOp
		for i := range 3 * n {
			ops = append(ops, termOp{term: fmt.Sprintf("t%d", i*7%n), weight: float64(i % 5), keepMax: i%3 != 0})
		}
		var s termSet
		for _, op := range ops {
			s.set(op.term, op.weight, op.keepMax)
		}
		if diff := cmp.Diff(naive(ops), s.terms, cmp.AllowUnexported(weightedTerm{})); diff != "" {
			t.Errorf("%d terms (-scan +termSet):\n%s", n, diff)
		}
	}
}

type termOp struct {
	term    string
	weight  float64
	keepMax bool
}

// BenchmarkLongQuery is a query of 20,000 distinct words, as code mode can send: its terms are
// collected in time linear in them.
func BenchmarkLongQuery(b *testing.B) {
	var q strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&q, "w%dq ", i)
	}
	r := NewRanker([]RankDoc{{ID: "a", Name: "alpha", Description: "one tool"}}, RankerOptions{})
	for b.Loop() {
		r.Search(q.String(), 5, nil)
	}
}
