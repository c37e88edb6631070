package tokenjuice

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// normalize turns raw terminal output into plain lines: invalid UTF-8 becomes U+FFFD, CRLF becomes
// LF, a carriage return that redraws a line (progress bars) keeps only what the terminal finally
// showed, ANSI escape sequences (CSI, OSC, two-byte ESC) are removed, backspace erases, and trailing
// whitespace is trimmed. Leading and trailing blank lines are dropped. It is a single pass over the
// bytes, without regular expressions, so that a 50 MB log costs one copy.
func normalize(b []byte) []string {
	var lines []string
	line := make([]byte, 0, 256)
	flush := func() {
		end := len(line)
		for end > 0 && (line[end-1] == ' ' || line[end-1] == '\t') {
			end--
		}
		lines = append(lines, string(line[:end]))
		line = line[:0]
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\n':
			flush()
			i++
		case c == '\r':
			switch {
			case i+1 < len(b) && b[i+1] == '\n':
				i++ // CRLF: the LF ends the line
			case i+1 == len(b):
				i++
			default:
				// A redraw: what follows replaces what was shown, unless nothing follows on this line.
				j := i + 1
				for j < len(b) && b[j] == '\r' {
					j++
				}
				if j < len(b) && b[j] != '\n' {
					line = line[:0]
				}
				i = j
			}
		case c == 0x1b:
			i = skipEscape(b, i)
		case c == '\b':
			if len(line) > 0 {
				_, n := utf8.DecodeLastRune(line)
				line = line[:len(line)-n]
			}
			i++
		case c < 0x20 && c != '\t' || c == 0x7f:
			i++ // other control characters carry nothing a model can use
		case c < utf8.RuneSelf:
			line = append(line, c)
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				line = append(line, "\uFFFD"...)
			} else {
				line = append(line, b[i:i+n]...)
			}
			i += n
		}
	}
	if len(line) > 0 {
		flush()
	}
	return trimBlankEdges(lines)
}

// skipEscape returns the index after the escape sequence starting at b[i] == ESC.
func skipEscape(b []byte, i int) int {
	j := i + 1
	if j >= len(b) {
		return j
	}
	switch b[j] {
	case '[': // CSI: parameters and intermediates, then a final byte in @..~
		j++
		for j < len(b) && b[j] >= 0x20 && b[j] <= 0x3f {
			j++
		}
		for j < len(b) && b[j] >= 0x20 && b[j] <= 0x2f {
			j++
		}
		if j < len(b) && b[j] >= 0x40 && b[j] <= 0x7e {
			j++
		}
		return j
	case ']', 'P', '_', '^', 'X': // OSC and other strings: up to BEL or ST
		j++
		for j < len(b) {
			if b[j] == 0x07 {
				return j + 1
			}
			if b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\' {
				return j + 2
			}
			if b[j] == '\n' {
				return j // unterminated: never swallow the next line
			}
			j++
		}
		return j
	default:
		if b[j] >= 0x20 && b[j] <= 0x2f { // ESC ( B and friends
			j++
		}
		if j < len(b) && b[j] >= 0x30 && b[j] <= 0x7e {
			j++
		}
		return j
	}
}

func trimBlankEdges(lines []string) []string {
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	return lines
}

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

// clip shortens s to at most max runes by cutting its middle, keeping the start and the end.
func clip(s string, max int) string {
	if max < 8 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	head := max * 2 / 3
	tail := max - head - 1
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// clipEnd shortens s to at most max runes, keeping its start.
func clipEnd(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// group formats n with thousands separators: 48213 → "48,213".
func group(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + group(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

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
