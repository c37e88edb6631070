package tokenjuice

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// estimateTokensByRune is estimateTokens as it was first written, one decoded rune at a time: the
// table-driven version must give the same count for every input.
func estimateTokensByRune[T string | []byte](s T) int {
	n := 0
	letters, digits := 0, 0
	flush := func() {
		n += (letters + 3) / 4
		n += (digits + 2) / 3
		letters, digits = 0, 0
	}
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			switch b := any(s).(type) {
			case string:
				r, size = utf8.DecodeRuneInString(b[i:])
			case []byte:
				r, size = utf8.DecodeRune(b[i:])
			}
		}
		i += size
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			if digits > 0 {
				flush()
			}
			letters++
		case r >= '0' && r <= '9':
			if letters > 0 {
				flush()
			}
			digits++
		default:
			flush()
			switch {
			case r == '\n':
				n++
			case r == ' ' || r == '\t':
			default:
				n++
			}
		}
	}
	flush()
	return n
}

// tokenInputs are adversarial inputs for the token estimate: run boundaries at every length modulo
// 3 and 4, every byte value, invalid and truncated UTF-8 between ASCII runs, and mixed scripts.
func tokenInputs() []string {
	in := []string{
		"", "a", "1", "\n", " ", "\t", "\r", "\x00", "\x7f", "\x80", "\xff", "é", "\xc3", "\xe2\x82", "\xf0\x9f\x98",
		"hello world", "a1b2c3", "abc123def4567", "x\xffy", "123\xc3\xa9456", "abcd\xe2\x82\xacefgh",
		"日本語のテキスト and English 123", "Ελληνικά: 42 λέξεις", "русский текст\nvs 中文", "emoji 😀😀 x9",
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\xef\xbf\xbd", "a\u00a0b\u2028c", "tab\tsep\tvals\r\n",
	}
	for n := range 14 {
		in = append(in, strings.Repeat("a", n), strings.Repeat("7", n), strings.Repeat("é", n), strings.Repeat("\xff", n))
		in = append(in, strings.Repeat("ab1", n), strings.Repeat("Zz9\n", n), strings.Repeat("x\x80", n))
	}
	in = append(in, strings.Repeat("w", 10_000), strings.Repeat("0", 9_999), strings.Repeat("q1", 5000)+"\xe2")
	var all strings.Builder
	for b := range 256 {
		all.WriteByte(byte(b))
	}
	in = append(in, all.String())
	// Random strings drawn from pieces that meet at run boundaries.
	pieces := []string{"a", "Z", "m", "0", "9", " ", "\t", "\n", "\r", ".", "_", "-", "é", "日", "😀", "\xff", "\x80", "\xc3", "\xe2\x82", "\xf0\x9f", "\x00", "~"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(64) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in = append(in, b.String())
	}
	// Random bytes, mostly ASCII, some high.
	for range 500 {
		b := make([]byte, rng.IntN(200))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = byte(rng.IntN(128))
			}
		}
		in = append(in, string(b))
	}
	return in
}

func TestEstimateTokensMatchesRuneByRune(t *testing.T) {
	for _, s := range tokenInputs() {
		if got, want := estimateTokens(s), estimateTokensByRune(s); got != want {
			t.Errorf("estimateTokens(%q) = %d, rune by rune %d", s, got, want)
		}
		if got, want := estimateTokens([]byte(s)), estimateTokensByRune([]byte(s)); got != want {
			t.Errorf("estimateTokens([]byte(%q)) = %d, rune by rune %d", s, got, want)
		}
	}
}

func FuzzEstimateTokens(f *testing.F) {
	for _, s := range tokenInputs()[:60] {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := estimateTokensByRune(b)
		if got := estimateTokens(b); got != want {
			t.Errorf("estimateTokens(%q) = %d, rune by rune %d", b, got, want)
		}
		if got := estimateTokens(string(b)); got != want {
			t.Errorf("estimateTokens(string(%q)) = %d, rune by rune %d", b, got, want)
		}
	})
}

// BenchmarkEstimateTokens is the estimate alone, on the pytest output of BenchmarkPytestShortLines
// (ASCII) and on text of mixed scripts.
func BenchmarkEstimateTokens(b *testing.B) {
	cases := []struct {
		name string
		in   []byte
	}{
		{"pytest_1MiB", genTests(1 << 20)},
		{"mixed_1MiB", []byte(strings.Repeat("résumé 日本語 naïve 2026-01-05 Ελληνικά x=42; ", 1<<20/64))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			b.ReportAllocs()
			for b.Loop() {
				estimateTokens(c.in)
			}
		})
	}
}
