package thinktag

import (
	"regexp"
	"strings"
)

// reference is a second, deliberately plain reading of the package rules: it sees the whole reply,
// looks ahead with ordinary string searches and matches tags with a regular expression, where the
// Filter keeps a state machine that works on deltas. The fuzz target holds the two to each other.
func reference(s string) (visible, reasoning string) {
	var vis, rea strings.Builder
	seen, closed := false, false
	lineStart, lineEmpty := true, true
	for i := 0; i < len(s); {
		if lineStart {
			lineStart = false
			if ch, n, ok := refFenceLine(refLine(s, i)); ok {
				// Opening line, then content lines up to and including a closing one.
				e := refLineEnd(s, i)
				for e < len(s) {
					l := refLine(s, e)
					e = refLineEnd(s, e)
					if refClosingFence(l, ch, n) {
						break
					}
				}
				vis.WriteString(s[i:e])
				seen = true
				i, lineStart, lineEmpty = e, true, true
				continue
			}
		}
		switch c := s[i]; c {
		case '\n':
			vis.WriteByte(c)
			i++
			lineStart, lineEmpty = true, true
		case '`':
			j := i
			for j < len(s) && s[j] == '`' {
				j++
			}
			open := j - i
			if refEscaped(s, i) {
				open--
			}
			end := j
			if open > 0 {
				if e := refSpanEnd(s, j, open); e >= 0 {
					end = e
				}
			}
			vis.WriteString(s[i:end])
			seen, lineEmpty = true, false
			i = end
		case '<':
			m := refTag.FindStringSubmatch(s[i:])
			if m == nil || len(m[0]) > maxTagLen {
				vis.WriteByte(c)
				seen, lineEmpty = true, false
				i++
				continue
			}
			if m[1] == "/" {
				vis.WriteString(m[0])
				seen, lineEmpty = true, false
				i += len(m[0])
				continue
			}
			atLineStart := lineEmpty
			if strings.HasSuffix(m[0], "/>") {
				closed = true
				i += len(m[0])
				lineStart = atLineStart
				if !seen {
					i = refTrim(s, i, &lineStart, &lineEmpty)
				}
				continue
			}
			body := i + len(m[0])
			at, n := refClosingTag(s, body)
			if at < 0 {
				if !seen && !closed {
					vis.WriteString(s[body:])
				} else {
					if rea.Len() > 0 {
						rea.WriteByte('\n')
					}
					rea.WriteString(s[body:])
				}
				i = len(s)
				continue
			}
			if rea.Len() > 0 {
				rea.WriteByte('\n')
			}
			rea.WriteString(s[body:at])
			closed = true
			i = at + n
			lineStart = atLineStart
			if !seen {
				i = refTrim(s, i, &lineStart, &lineEmpty)
			}
		default:
			vis.WriteByte(c)
			if !isBlank(c) {
				seen = true
			}
			lineEmpty = false
			i++
		}
	}
	return vis.String(), rea.String()
}

// refTrim skips the whitespace at s[i:] that follows a block closed before anything visible; a
// newline among it puts the next byte at a line start.
func refTrim(s string, i int, lineStart, lineEmpty *bool) int {
	rest := strings.TrimLeft(s[i:], " \t\r\n")
	if strings.Contains(s[i:len(s)-len(rest)], "\n") {
		*lineStart, *lineEmpty = true, true
	}
	return len(s) - len(rest)
}

// refTag spells the names' cases out: (?i) would also fold the Kelvin sign into a k.
var refTag = regexp.MustCompile(`^<(/?)(?:[Tt][Hh][Ii][Nn][Kk](?:[Ii][Nn][Gg])?|[Tt][Hh][Oo][Uu][Gg][Hh][Tt])(?:[ \t\r/][^<>\n]*)?>`)

// refClosingTag finds the first closing tag at or after i.
func refClosingTag(s string, i int) (at, n int) {
	for {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			return -1, 0
		}
		i += j
		if m := refTag.FindStringSubmatch(s[i:]); m != nil && m[1] == "/" && len(m[0]) <= maxTagLen {
			return i, len(m[0])
		}
		i++
	}
}

// refSpanEnd returns the end of the first run of exactly n backticks after j in the same
// paragraph, or -1.
func refSpanEnd(s string, j, n int) int {
	for first := true; j <= len(s); first = false {
		line := refLine(s, j)
		if !first && (strings.Trim(line, " \t\r") == "" || refIsFenceLine(line)) {
			return -1
		}
		for k := 0; k < len(line); {
			if line[k] != '`' {
				k++
				continue
			}
			r := k
			for r < len(line) && line[r] == '`' {
				r++
			}
			if r-k == n {
				return j + r
			}
			k = r
		}
		if j+len(line) >= len(s) {
			return -1
		}
		j += len(line) + 1
	}
	return -1
}

func refIsFenceLine(line string) bool { _, _, ok := refFenceLine(line); return ok }

// refFenceLine reports whether line (without its newline) opens a fence.
func refFenceLine(line string) (ch byte, n int, ok bool) {
	rest := line
	for k := 0; k < 3 && strings.HasPrefix(rest, " "); k++ {
		rest = rest[1:]
	}
	if rest == "" || (rest[0] != '`' && rest[0] != '~') {
		return 0, 0, false
	}
	ch = rest[0]
	info := strings.TrimLeft(rest, string(ch))
	n = len(rest) - len(info)
	if n < 3 || (ch == '`' && strings.Contains(info, "`")) {
		return 0, 0, false
	}
	return ch, n, true
}

// refClosingFence reports whether line closes a fence of n ch characters.
func refClosingFence(line string, ch byte, n int) bool {
	line = strings.TrimSuffix(line, "\n")
	rest := line
	for k := 0; k < 3 && strings.HasPrefix(rest, " "); k++ {
		rest = rest[1:]
	}
	after := strings.TrimLeft(rest, string(ch))
	return len(rest)-len(after) >= n && strings.Trim(after, " \t\r") == ""
}

// refEscaped reports whether s[i] follows an odd number of backslashes.
func refEscaped(s string, i int) bool {
	k := i
	for k > 0 && s[k-1] == '\\' {
		k--
	}
	return (i-k)%2 == 1
}

// refLine returns the line at i without its newline.
func refLine(s string, i int) string {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return s[i : i+j]
	}
	return s[i:]
}

// refLineEnd returns the index after the newline that ends the line at i, or len(s).
func refLineEnd(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(s)
}
