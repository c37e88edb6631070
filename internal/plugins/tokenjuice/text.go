package tokenjuice

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Characters are counted as Unicode code points (runes). The reference counts grapheme clusters;
// for command output, which is overwhelmingly ASCII, the two differ by a handful, and runes need
// no segmentation tables.
func charCount(s string) int { return utf8.RuneCountInString(s) }

func linesChars(lines []string) int {
	n := 0
	for _, l := range lines {
		n += charCount(l) + 1
	}
	return n
}

// clip shortens s to at most max runes by cutting its middle, keeping the start and the end (see
// clipBytes).
func clip(s string, max int) string {
	if max < 8 || utf8.RuneCountInString(s) <= max {
		return s
	}
	return string(clipBytes(nil, []byte(s), max))
}

// group formats n with thousands separators: 48213 → "48,213".
func group(n int) string { return string(appendGroup(nil, n)) }

// plural renders "1 file", "3 files", "2 matches".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%s %s", group(n), noun)
	}
	switch {
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		return fmt.Sprintf("%s %ses", group(n), noun)
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return fmt.Sprintf("%s %sies", group(n), noun[:len(noun)-1])
	}
	return fmt.Sprintf("%s %ss", group(n), noun)
}

// EstimateTokens is an offline estimate of how many tokens a BPE tokenizer would make of s, without
// a vocabulary: a run of ASCII letters costs one token per 4 letters (rounded up), a run of digits
// one per 3, each punctuation, symbol or control character one, a newline one, a space or a tab
// nothing (BPE merges a space into the next word), and each non-ASCII rune one. On English text
// and source code it lands within about 15% of cl100k counts; it is meant for comparing sizes, not
// billing.
func EstimateTokens(s string) int { return estimateTokens(s) }

// Byte classes of estimateTokens. A byte at or above utf8.RuneSelf begins or continues a non-ASCII
// rune; such bytes never occur inside an ASCII character, so a run of them is whole runes.
const (
	tokLetter = iota
	tokDigit
	tokOne  // newline, punctuation, symbols, control characters: one token each
	tokFree // space and tab
	tokHigh
)

var tokClass = func() (t [256]uint8) {
	for b := range 256 {
		switch {
		case b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z':
			t[b] = tokLetter
		case b >= '0' && b <= '9':
			t[b] = tokDigit
		case b == ' ' || b == '\t':
			t[b] = tokFree
		case b >= utf8.RuneSelf:
			t[b] = tokHigh
		default:
			t[b] = tokOne
		}
	}
	return t
}()

// estimateTokens reads s a run of one class at a time: letters and digits are costed per run, and
// a run of non-ASCII bytes is counted in runes as utf8 decodes them (an invalid byte is one).
func estimateTokens[T string | []byte](s T) int {
	n := 0
	for i := 0; i < len(s); {
		c := tokClass[s[i]]
		j := i + 1
		switch c {
		case tokOne:
			n++
			i = j
			continue
		case tokFree:
			i = j
			continue
		}
		for j < len(s) && tokClass[s[j]] == c {
			j++
		}
		switch c {
		case tokLetter:
			n += (j - i + 3) / 4
		case tokDigit:
			n += (j - i + 2) / 3
		default:
			n += runeCount(s[i:j])
		}
		i = j
	}
	return n
}

func runeCount[T string | []byte](s T) int {
	switch b := any(s).(type) {
	case string:
		return utf8.RuneCountInString(b)
	case []byte:
		return utf8.RuneCount(b)
	}
	return len(s)
}
