package search

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/text/unicode/norm"
)

const ompGoldenPath = "../../testdata/reference/golden/omp-bm25-golden.txt"

// goldenSections splits a reference golden file into its "--- name ---" sections.
func goldenSections(t testing.TB, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sections := map[string][]string{}
	current := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "--- ") && strings.HasSuffix(line, " ---") {
			current = strings.TrimSuffix(strings.TrimPrefix(line, "--- "), " ---")
			continue
		}
		if line != "" {
			sections[current] = append(sections[current], line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sections
}

func TestTokenizeGolden(t *testing.T) {
	lines := goldenSections(t, ompGoldenPath)["tokenizer vectors"]
	if len(lines) < 13 {
		t.Fatalf("golden file has %d tokenizer vectors, want at least 13", len(lines))
	}
	for _, line := range lines {
		in, out, ok := strings.Cut(line, " => ")
		if !ok {
			t.Fatalf("malformed golden line %q", line)
		}
		var input string
		var want []string
		if err := json.Unmarshal([]byte(in), &input); err != nil {
			t.Fatalf("golden input %q: %v", in, err)
		}
		if err := json.Unmarshal([]byte(out), &want); err != nil {
			t.Fatalf("golden output %q: %v", out, err)
		}
		if diff := cmp.Diff(want, Tokenize(input)); diff != "" {
			t.Errorf("Tokenize(%q) mismatch (-want +got):\n%s", input, diff)
		}
		if diff := cmp.Diff(want, refTokenize(input)); diff != "" {
			t.Errorf("refTokenize(%q) mismatch (-want +got):\n%s", input, diff)
		}
	}
}

func TestTokenizeCases(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   !!! ", nil},
		{"ABCDef", []string{"abc", "def"}},
		{"ABcDEf", []string{"a", "bc", "d", "ef"}},
		{"xABc", []string{"x", "a", "bc"}},
		{"ΟΔΟΣ", []string{"οδος"}}, // final sigma at the end of a word
		{"ΟΔΟΣ ΣΟΦΟΣ", []string{"οδος", "σοφος"}},
		{"aΣ", []string{"a", "σ"}},                // the camel split isolates it: not final
		{"Ǆemal", []string{"d", "zemal"}},         // NFKD: D, Z, caron; the caron goes, DZ is an acronym
		{"Ⅻ century", []string{"xii", "century"}}, // compatibility numerals become letters
		{"snake_case__x", []string{"snake", "case", "x"}},
		{"a\xffb", []string{"a", "b"}}, // invalid UTF-8 separates
		{"GitHub GitHub", []string{"git", "hub", "git", "hub"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Tokenize(tt.in)); diff != "" {
			t.Errorf("Tokenize(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestAppendTokensReusesDst(t *testing.T) {
	dst := make([]string, 0, 8)
	dst = append(dst, "keep")
	got := AppendTokens(dst, "fooBar baz")
	if diff := cmp.Diff([]string{"keep", "foo", "bar", "baz"}, got); diff != "" {
		t.Fatalf("AppendTokens mismatch (-want +got):\n%s", diff)
	}
	if allocs := testing.AllocsPerRun(100, func() { got = AppendTokens(got[:0], "fooBar bazQux") }); allocs > 1 {
		t.Errorf("AppendTokens allocated %v times per call, want at most 1", allocs)
	}
}

// The reference implementation: the seed's JavaScript pipeline transcribed with Go
// regexps. Go's RE2 prefers leftmost-first submatches and replaces left to right
// without overlap, which is what JavaScript's replace with /g does for these patterns.
var (
	refMarks   = regexp.MustCompile(`\p{M}+`)
	refAcronym = regexp.MustCompile(`(\p{Lu}+)(\p{Lu}\p{Ll})`)
	refCamel   = regexp.MustCompile(`(\p{Ll}|\p{N})(\p{Lu})`)
	refSep     = regexp.MustCompile(`[^\p{L}\p{N}]+`)
)

func refTokenize(s string) []string {
	s = norm.NFKD.String(s)
	s = refMarks.ReplaceAllString(s, "")
	s = refAcronym.ReplaceAllString(s, "$1 $2")
	s = refCamel.ReplaceAllString(s, "$1 $2")
	s = refSep.ReplaceAllString(s, " ")
	s = refLower(s)
	var out []string
	for _, tok := range strings.Split(strings.TrimSpace(s), " ") {
		if tok != "" {
			out = append(out, tok)
		}
	}
	return out
}

// refLower is JavaScript's toLowerCase written the slow way: per rune, with the
// Final_Sigma context looked up over the whole string.
func refLower(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if r != 'Σ' {
			if r == 'İ' {
				b.WriteString("i\u0307")
				continue
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		before := false
		for j := i - 1; j >= 0; j-- {
			if isCased(rs[j]) {
				before = true
				break
			}
			if !isCaseIgnorable(rs[j]) {
				break
			}
		}
		after := false
		for j := i + 1; j < len(rs); j++ {
			if isCased(rs[j]) {
				after = true
				break
			}
			if !isCaseIgnorable(rs[j]) {
				break
			}
		}
		if before && !after {
			b.WriteRune('ς')
		} else {
			b.WriteRune('σ')
		}
	}
	return b.String()
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"MCPTool", "getURLs", "HTTPServer2Go", "iPhone15Pro", "ÄÖÜ straße", "ﬁle", "１２３",
		"東京 tokyo", "ΟΔΟΣ", "aΣb", "x86_64", "ABcDEf", "a\u0301B", "ǅx", "\xff\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Tokenize(s)
		// JavaScript strings cannot hold invalid UTF-8; Tokenize reads it as U+FFFD, a
		// separator, and so does the reference given the same text.
		want := refTokenize(strings.ToValidUTF8(s, "\uFFFD"))
		if !cmp.Equal(want, got) {
			t.Fatalf("Tokenize(%q) = %q, reference %q", s, got, want)
		}
	})
}

// TestTermDictGrows checks the corpus dictionary across many resizes: every term keeps
// its id, ids count from zero in order of addition, a term added again keeps its id, an
// absent term is absent, and a term's text comes back, short or long.
func TestTermDictGrows(t *testing.T) {
	d := newTermDict(1)
	term := func(i int) []byte {
		if i%7 == 0 {
			return []byte(fmt.Sprintf("long-term-number-%d", i))
		}
		return []byte(strconv.Itoa(i * 7919))
	}
	termID := func(t []byte) int32 {
		if len(t) > maxPacked {
			return d.longID(t)
		}
		return d.id(packBytes(t))
	}
	const n = 20000
	for i := range n {
		if id := termID(term(i)); id != int32(i) {
			t.Fatalf("termID(%q) = %d, want %d", term(i), id, i)
		}
	}
	if id := termID(term(42)); id != 42 {
		t.Fatalf("termID(%q) again = %d, want 42", term(42), id)
	}
	for i := range n {
		if id, ok := d.lookup(term(i)); !ok || id != int32(i) {
			t.Fatalf("lookup(%q) = %d, %v; want %d, true", term(i), id, ok, i)
		}
		if got := d.term(int32(i)); got != string(term(i)) {
			t.Fatalf("term(%d) = %q, want %q", i, got, term(i))
		}
	}
	for _, absent := range [][]byte{term(n), nil, []byte("long-term-number-absent")} {
		if _, ok := d.lookup(absent); ok {
			t.Errorf("lookup(%q) found an absent term", absent)
		}
	}
	if d.Len() != n {
		t.Errorf("Len() = %d, want %d", d.Len(), n)
	}
}

// FuzzCorpusTermIDs: the corpus builder's keys of a field, from its ASCII path or the
// scanner's, name exactly Tokenize's tokens, and the dictionary's ids of them name the
// same terms.
func FuzzCorpusTermIDs(f *testing.F) {
	for _, s := range []string{
		"MCPTool", "getURLs", "HTTPServer2Go", "iPhone15Pro", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOP",
		"x86_64 a-b", "ÄÖÜ straße", "get_weather_forecast_for_city", "aB", "A", "",
		"getWeatherV2", "abcdefgHijklmnoP", "ABCDEFGHIJKLMNop", "aaaaaaaBCccccccD", "x1234567Abcdefgh1",
		"HTTPServerV10 x", "aBcDeFgHiJkLmNoP", "ab12CD34ef56GH78", "getX ab", "ABCDEFGh",
	} {
		f.Add(s, "query limit")
	}
	f.Fuzz(func(t *testing.T, s, other string) {
		b := &corpusBuilder{dict: newTermDict(0)}
		b.build([]Doc{{Name: other}, {Name: s, Summary: other + " " + s}}, []int{0, 1})
		for _, text := range []string{other, s, other + " " + s} {
			b.keys, b.long = b.keys[:0], b.long[:0]
			f := b.scan(text, weightName)
			var got []string
			for _, key := range b.keys[f.from:f.to] {
				if w := key.hi >> weightShift; w != weightName {
					t.Fatalf("%q: a key of weight %d, want %d", text, w, weightName)
				}
				key.hi &= keyBits
				term := key.String()
				if isLong(key) {
					term = string(b.long[uint32(key.lo) : key.lo>>32])
				}
				if id, _ := b.slowID(key); b.dict.term(id) != term {
					t.Fatalf("%q: term %q has id %d, which names %q", text, term, id, b.dict.term(id))
				}
				got = append(got, term)
			}
			if want := Tokenize(text); !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
				t.Fatalf("term ids of %q name %q, Tokenize gives %q", text, got, want)
			}
		}
	})
}

// TestPackLowerASCII: a key packed from the text, eight bytes at a time, is the key
// termID packs from the lowercased token, at every offset and length, near the end of
// the text or not.
func TestPackLowerASCII(t *testing.T) {
	const text = "AbcDEFghiJKLmnoPQRstuVWXyz0123456789ZYXwvuTSRqpoNMLkjiHGFedcBA@[`{"
	for start := range len(text) {
		for n := 1; n <= maxPacked && start+n <= len(text); n++ {
			want := packBytes([]byte(strings.ToLower(text[start : start+n])))
			if got := packLowerASCII(text, start, n); got != want {
				t.Fatalf("packLowerASCII(%q) = %x, want %x", text[start:start+n], got, want)
			}
		}
	}
}
