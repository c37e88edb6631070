package directive

import (
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that Parse never panics, that Body is the input with parts deleted (a
// subsequence), that no directive it applied is left in Body, and that a directive-only
// message has an empty Body. The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"/think high", "/t high please do X", "hello /t low world", "line1\n/think high\nline3",
		"/think high /fast on /v on do it", "/think extra high", "/think x_high", "/think:",
		"/think inherit now", "foo/think high", "/fast status", "/status", "x /t:/think high",
		"a\r\n /reason stream \r\nb", "/v on/think high", "/trace raw\n\n/think\u00a0max",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, parse := range []func(string) Parsed{Parse, ParseCommand} {
			p := parse(in)
			if !subsequence(p.Body, in) {
				t.Fatalf("Body %q is not a subsequence of %q", p.Body, in)
			}
			if p.Only && p.Body != "" {
				t.Fatalf("directive-only %q left Body %q", in, p.Body)
			}
			if p.Only != (len(p.Directives) > 0 && p.Body == "") {
				t.Fatalf("Only = %v for %q with %d directives and Body %q", p.Only, in, len(p.Directives), p.Body)
			}
			if utf8.ValidString(in) && !utf8.ValidString(p.Body) {
				t.Fatalf("Body %q of valid UTF-8 %q is not valid UTF-8", p.Body, in)
			}
			for _, d := range p.Directives {
				if d.Applicable() == (d.Query || d.Invalid) || d.Clear && d.Value != "" {
					t.Fatalf("inconsistent directive %+v in %q", d, in)
				}
			}
		}
		// Parsing the body again finds nothing to apply: every applied directive left it.
		p := Parse(in)
		for _, d := range Parse(p.Body).Directives {
			if d.Applicable() {
				t.Fatalf("Body %q of %q still holds %+v", p.Body, in, d)
			}
		}
	})
}

// subsequence reports whether sub is s with some bytes deleted.
func subsequence(sub, s string) bool {
	i := 0
	for k := 0; k < len(s) && i < len(sub); k++ {
		if s[k] == sub[i] {
			i++
		}
	}
	return i == len(sub)
}
