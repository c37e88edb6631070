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
// one per 3, each punctuation or symbol character one, a newline one, other whitespace nothing (BPE
// merges a space into the next word), and each non-ASCII rune one. On English text and source
// code it lands within about 15% of cl100k counts; it is meant for comparing sizes, not billing.
func EstimateTokens(s string) int { return estimateTokens(s) }

func estimateTokens[T string | []byte](s T) int {
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
