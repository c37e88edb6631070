package tokenjuice

import (
	"bytes"
	"unicode/utf8"
)

// lineScanner yields the normalized lines of an output one at a time, so that a reducer can walk a
// 50 MB log without holding its lines: a line is a view into the output when it needs no
// rewriting (the common case), or into a buffer that the next call reuses. Callers copy what they
// keep. Normalization: invalid UTF-8 becomes U+FFFD, CRLF becomes LF, a carriage return that
// redraws a line (progress bars) keeps only what the terminal finally showed, ANSI escape
// sequences (CSI, OSC, two-byte ESC) are removed, backspace erases, other control characters go,
// and trailing whitespace is trimmed. Leading and trailing blank lines are dropped.
type lineScanner struct {
	b   []byte
	i   int
	buf []byte

	started  bool // a non-blank line was returned: later blank lines are kept
	blanks   int  // blank lines to return before held
	blankOff int
	held     []byte // the non-blank line that released the pending blanks
	heldOff  int
	hasHeld  bool
}

func newLineScanner(b []byte) *lineScanner { return &lineScanner{b: b} }

// next returns the next line and the offset in the output where it starts. The line is valid until
// the next call.
func (s *lineScanner) next() (line []byte, off int, ok bool) {
	if s.blanks > 0 {
		s.blanks--
		return nil, s.blankOff, true
	}
	if s.hasHeld {
		s.hasHeld = false
		return s.held, s.heldOff, true
	}
	for {
		l, o, ok := s.rawNext()
		if !ok {
			return nil, 0, false
		}
		if len(l) > 0 {
			s.started = true
			return l, o, true
		}
		if !s.started {
			continue // leading blank lines go
		}
		// Blank lines are returned only if a non-blank line follows them; trailing ones go. The
		// line that follows may live in s.buf: nothing is read before it is returned.
		n := 1
		for {
			l2, o2, ok2 := s.rawNext()
			if !ok2 {
				return nil, 0, false
			}
			if len(l2) == 0 {
				n++
				continue
			}
			s.held, s.heldOff, s.hasHeld = l2, o2, true
			s.blanks, s.blankOff = n-1, o
			return nil, o, true
		}
	}
}

// rawNext returns the next normalized line, blank or not.
func (s *lineScanner) rawNext() ([]byte, int, bool) {
	if s.i >= len(s.b) {
		return nil, 0, false
	}
	start := s.i
	seg := s.b[start:]
	if n := bytes.IndexByte(seg, '\n'); n >= 0 {
		seg = seg[:n]
		s.i = start + n + 1
	} else {
		s.i = len(s.b)
	}
	if plain(seg) {
		return trimRightSpace(seg), start, true
	}
	s.buf = normalizeLine(s.buf[:0], seg)
	return trimRightSpace(s.buf), start, true
}

// plain reports whether seg is valid UTF-8 without control characters other than tab, so that it
// needs no rewriting.
func plain(seg []byte) bool {
	ascii := true
	for _, c := range seg {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.Valid(seg)
}

func trimRightSpace(b []byte) []byte {
	end := len(b)
	for end > 0 && (b[end-1] == ' ' || b[end-1] == '\t') {
		end--
	}
	return b[:end]
}

// normalizeLine appends the normalized form of seg, one line without its newline, to dst.
func normalizeLine(dst, seg []byte) []byte {
	line := dst
	base := len(dst)
	for i := 0; i < len(seg); {
		c := seg[i]
		switch {
		case c == '\r':
			// A redraw: what follows replaces what was shown, unless nothing follows on this line
			// (CRLF, or carriage returns at the end).
			j := i + 1
			for j < len(seg) && seg[j] == '\r' {
				j++
			}
			if j < len(seg) {
				line = line[:base]
			}
			i = j
		case c == 0x1b:
			i = skipEscape(seg, i)
		case c == '\b':
			if len(line) > base {
				_, n := utf8.DecodeLastRune(line[base:])
				line = line[:len(line)-n]
			}
			i++
		case c < 0x20 && c != '\t' || c == 0x7f:
			i++ // other control characters carry nothing a model can use
		case c < utf8.RuneSelf:
			line = append(line, c)
			i++
		default:
			r, n := utf8.DecodeRune(seg[i:])
			if r == utf8.RuneError && n == 1 {
				line = append(line, "\uFFFD"...)
			} else {
				line = append(line, seg[i:i+n]...)
			}
			i += n
		}
	}
	return line
}

// normalize returns all normalized lines of b (see lineScanner), for reducers that parse a whole
// output. Streaming reducers use lineScanner directly. The output is copied once: lines that need
// no rewriting are substrings of that copy.
func normalize(b []byte) []string {
	lines := make([]string, 0, bytes.Count(b, []byte{'\n'})+1)
	all := string(b)
	s := newLineScanner(b)
	for {
		l, off, ok := s.next()
		if !ok {
			return lines
		}
		if len(l) > 0 && off+len(l) <= len(b) && &b[off] == &l[0] {
			lines = append(lines, all[off:off+len(l)])
		} else {
			lines = append(lines, string(l))
		}
	}
}

// skipEscape returns the index after the escape sequence starting at b[i] == ESC. Sequences never
// extend past a newline.
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
