package thinktag

import (
	"strings"
	"testing"
)

// FuzzFilter streams a reply in pieces whose lengths come from cuts (a zero is an empty Write) and
// checks that the pieces do not matter: the output equals Split's, which equals the reference
// reading of the rules, and the filter never holds back more than it may.
func FuzzFilter(f *testing.F) {
	for _, tc := range splitCases {
		f.Add(tc.in, []byte{1, 3, 0, 7})
	}
	f.Add("\x01a\x06\x0b\x02b\x08", []byte{2})
	f.Add("\x08x \x01y\x0b\x0bz\x02\x08", []byte{5, 0})
	f.Fuzz(func(t *testing.T, text string, cuts []byte) {
		checkStream(t, text, cuts)
		checkStream(t, expand(text), cuts)
	})
}

// fuzzTokens stand for the control bytes 1 to 15, so that mutations reach tags, fences and runs.
var fuzzTokens = [...]string{
	1: "<think>", 2: "</think>", 3: "<Thinking a=\"`\">", 4: "</thought >", 5: "<think/>",
	6: "```", 7: "~~~", 8: "`", 9: "``", 10: "\n", 11: "\n\n", 12: "\\", 13: "   ```go\n",
	14: "<thin", 15: "  \t",
}

// expand replaces the control bytes of s with their tokens.
func expand(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; 0 < c && int(c) < len(fuzzTokens) {
			b.WriteString(fuzzTokens[c])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func checkStream(t *testing.T, text string, cuts []byte) {
	{
		v, r := Split(text)
		if rv, rr := reference(text); v != rv || r != rr {
			t.Fatalf("Split(%q) = %q, %q; reference gives %q, %q", text, v, r, rv, rr)
		}
		var flt Filter
		var b strings.Builder
		rest := text
		for k := 0; rest != ""; k++ {
			n := len(rest)
			if len(cuts) > 0 {
				n = min(int(cuts[k%len(cuts)]%32), n)
			}
			b.WriteString(flt.Write(rest[:n]))
			rest = rest[n:]
			if !heldOK(&flt) {
				t.Fatalf("%q: holds %q", text, flt.hold)
			}
			if k > 4*len(text)+8 {
				break // only zero cuts: the rest goes to Close
			}
		}
		b.WriteString(flt.Write(rest))
		b.WriteString(flt.Close())
		if got := b.String(); got != v {
			t.Fatalf("%q in pieces %v: visible %q, Split gives %q", text, cuts, got, v)
		}
		if got := flt.Reasoning(); got != r {
			t.Fatalf("%q in pieces %v: reasoning %q, Split gives %q", text, cuts, got, r)
		}
	}
}
