package thinktag

import "strings"

// Each step reads from s[i], moves the filter's state on and returns where reading goes on. A step
// that returns false needs text after s to decide; it keeps nothing but where a lookahead got to,
// and is taken again from the same place when more text comes.

// text reads visible Markdown.
func (f *Filter) text(s string, i int, eof bool) (int, bool) {
	if f.trim {
		return f.trimLead(s, i), true
	}
	if !f.midLine {
		return f.lineStart(s, i, eof)
	}
	if f.cand > 0 {
		return f.candidateInfo(s, i, eof)
	}
	c := s[i]
	if f.run > 0 && c != '`' {
		f.endRun(f.run, f.runEsc)
		f.run = 0
	}
	switch c {
	case '`':
		if f.run == 0 {
			f.runEsc = f.bs%2 == 1
		}
		f.run++
		f.bs = 0
	case '\\':
		f.bs++
	case '\n':
		if !f.inkLine {
			f.spans.cut(0) // a blank line ends the paragraph: pending runs were literal
		}
		f.bs = 0
		f.midLine, f.lineUsed, f.inkLine = false, false, false
		f.emit(s, i, i+1)
		return i + 1, true
	case '<':
		return f.angle(s, i, eof)
	default:
		j := len(s)
		if k := index(s[i:], &textSpecial); k >= 0 {
			j = i + k
		}
		f.bs = 0
		f.lineUsed = true
		if !f.inkLine && hasInk(s[i:j]) {
			f.inkLine, f.seen = true, true
		}
		f.emit(s, i, j)
		return j, true
	}
	f.mark()
	f.emit(s, i, i+1)
	return i + 1, true
}

// trimLead drops the blanks and newlines that follow a block closed before anything visible, up
// to the next other byte. Nothing is held: a delta of whitespace only is dropped whole, and the
// next goes on dropping.
func (f *Filter) trimLead(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\n':
			f.midLine, f.lineUsed, f.inkLine = false, false, false
		case ' ', '\t', '\r':
		default:
			f.trim = false
			return i
		}
	}
	return i
}

// mark notes that a non-blank character of the current line was delivered.
func (f *Filter) mark() { f.lineUsed, f.inkLine, f.seen = true, true, true }

// lineStart decides whether the line at s[i] opens a fence, reading at most its indentation and
// first run of fence characters. A backtick fence also needs the rest of the line to have no
// backtick: such a line goes on as a candidate.
func (f *Filter) lineStart(s string, i int, eof bool) (int, bool) {
	j := i
	for j < len(s) && j-i < 3 && s[j] == ' ' {
		j++
	}
	if j == len(s) && !eof {
		return i, false
	}
	if j == len(s) || (s[j] != '`' && s[j] != '~') {
		f.midLine = true
		return i, true
	}
	c := s[j]
	k := j
	for k < len(s) && s[k] == c {
		k++
	}
	if k == len(s) && !eof {
		f.wait = waitRun // the run goes on: Write need not read it again for each byte of it
		return i, false
	}
	f.midLine = true
	if k-j < 3 {
		return i, true
	}
	f.mark()
	f.emit(s, i, k)
	if c == '~' {
		f.openFence('~', k-j)
	} else {
		f.cand = k - j
	}
	return k, true
}

// candidateInfo reads the rest of a line that starts with a run of three or more backticks. It is a
// fence unless a backtick follows on the line. Text that is visible either way is delivered; an
// opening tag waits for the verdict, as a tag is content in a fence's info string.
func (f *Filter) candidateInfo(s string, i int, eof bool) (int, bool) {
	if k := index(s[i:], &textSpecial); k != 0 {
		j := len(s)
		if k > 0 {
			j = i + k
		}
		f.bs = 0
		f.emit(s, i, j)
		return j, true
	}
	switch s[i] {
	case '\n':
		f.openFence('`', f.cand)
		return i, true
	case '`':
		f.notFence()
		return i, true
	case '\\':
		f.bs++
		f.emit(s, i, i+1)
		return i + 1, true
	}
	kind, n, more := parseTag(s[i:], eof)
	if more {
		return i, false
	}
	switch kind {
	case noTag:
		n = 1
		fallthrough
	case closeTag:
		f.bs = 0
		f.emit(s, i, i+n)
		return i + n, true
	}
	k := index(s[i:], &runOrLine)
	switch {
	case k < 0 && !eof:
		f.wait = waitLine
		return i, false
	case k >= 0 && s[i+k] == '`':
		f.notFence()
	default:
		f.openFence('`', f.cand)
	}
	return i, true
}

// notFence turns a fence candidate back into a line of text that starts with a backtick run.
func (f *Filter) notFence() {
	n := f.cand
	f.cand = 0
	f.endRun(n, false)
}

func (f *Filter) openFence(c byte, n int) {
	f.mode, f.fenceCh, f.fenceLen, f.fl = modeFence, c, n, flInfo
	f.cand = 0
	f.spans.cut(0) // a fence interrupts the paragraph: pending runs were literal
}

// endRun takes a finished run of n backticks. A run as long as a pending one closes it (when the
// runs before it are literal) and with it every later one; otherwise it may open a span itself,
// one backtick shorter when the first is escaped. A length already pending is not added again:
// the older run would take any closing run first, so the lengths stay distinct and few.
func (f *Filter) endRun(n int, esc bool) {
	if k := f.spans.find(n); k >= 0 {
		f.spans.cut(k)
		return
	}
	if esc {
		n--
	}
	if n > 0 && f.spans.find(n) < 0 {
		f.spans.add(n)
	}
}

// angle reads a '<' in text.
func (f *Filter) angle(s string, i int, eof bool) (int, bool) {
	kind, n, more := parseTag(s[i:], eof)
	if more {
		return i, false
	}
	switch kind {
	case noTag:
		n = 1
		fallthrough
	case closeTag:
		f.bs = 0
		f.mark()
		f.emit(s, i, i+n)
		return i + n, true
	}
	if f.spans.len() > 0 && f.para.literal(f.off+i, f.spans.all()) {
		f.spans.cut(0)
	}
	if f.spans.len() > 0 {
		// Inside a code span if any pending run has its closing run before the paragraph ends.
		if !f.look.done {
			f.look.feed(s[i+f.look.pos:], &f.spans)
			if !f.look.done && eof {
				f.look.finish(&f.spans)
			}
			if !f.look.done {
				f.wait = waitSpan
				return i, false
			}
		}
		look := f.look
		f.look = lookahead{}
		if !look.found {
			f.para = look.paragraph(f.off + i)
		}
		if look.found {
			end := i + look.end
			f.spans.cut(look.k)
			f.bs = 0
			f.mark()
			f.emit(s, i, end)
			return end, true
		}
		f.spans.cut(0)
	}
	f.bs = 0
	if kind == emptyTag {
		f.closed, f.trim = true, !f.seen
		if !f.lineUsed {
			f.midLine = false
		}
		return i + n, true
	}
	f.mode = modeHidden
	f.rescue = !f.seen && !f.closed
	f.lineAtOpen = !f.lineUsed
	if f.reasoning.Len() > 0 {
		f.reasoning.WriteByte('\n')
	}
	return i + n, true
}

// hidden reads a reasoning block up to its closing tag.
func (f *Filter) hidden(s string, i int, eof bool) (int, bool) {
	j := strings.IndexByte(s[i:], '<')
	if j < 0 {
		f.reasoning.WriteString(s[i:])
		return len(s), true
	}
	if j > 0 {
		f.reasoning.WriteString(s[i : i+j])
		return i + j, true
	}
	if i+1 < len(s) && s[i+1] != '/' {
		f.reasoning.WriteByte('<') // only a closing tag matters here
		return i + 1, true
	}
	kind, n, more := parseTag(s[i:], eof)
	if more {
		return i, false
	}
	if kind != closeTag {
		f.reasoning.WriteByte('<')
		return i + 1, true
	}
	f.mode = modeText
	f.closed, f.rescue, f.trim = true, false, !f.seen
	if f.lineAtOpen {
		f.midLine = false
	}
	return i + n, true
}

type fenceState uint8

const (
	flInfo  fenceState = iota // the rest of the opening line
	flStart                   // a line's indentation
	flRun                     // fence characters that may close the fence
	flTrail                   // blanks after a closing run
	flBody                    // a content line
)

// fence reads fenced code, all of it visible, watching for the closing fence line.
func (f *Filter) fence(s string, i int) int {
	start := i
	for i < len(s) {
		c := s[i]
		switch f.fl {
		case flInfo, flBody:
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				i = len(s)
				continue
			}
			i += j + 1
			f.fl, f.fn = flStart, 0
		case flStart:
			switch {
			case c == ' ' && f.fn < 3:
				f.fn++
				i++
			case c == f.fenceCh:
				f.fl, f.fn = flRun, 1
				i++
			default:
				f.fl = flBody
			}
		case flRun:
			switch {
			case c == f.fenceCh:
				f.fn++
				i++
			case f.fn < f.fenceLen:
				f.fl = flBody
			default:
				f.fl = flTrail
			}
		case flTrail:
			switch c {
			case ' ', '\t', '\r':
				i++
			case '\n':
				i++
				f.emit(s, start, i)
				f.mode = modeText
				f.midLine, f.lineUsed, f.inkLine = false, false, false
				return i
			default:
				f.fl = flBody
			}
		}
	}
	f.emit(s, start, i)
	return i
}

// hasInk reports whether s has a character other than a blank.
func hasInk(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isBlank(s[i]) {
			return true
		}
	}
	return false
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// byteSet is a set of bytes, for scanning text at a byte a step without building the set on
// every call as strings.IndexAny does.
type byteSet [256]bool

func makeByteSet(chars string) (set byteSet) {
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return set
}

var (
	textSpecial = makeByteSet("`\\\n<") // what text mode decides on; anything else is delivered as is
	runOrLine   = makeByteSet("`\n")
)

// index returns the index of the first byte of s in set, or -1.
func index(s string, set *byteSet) int {
	for i := 0; i < len(s); i++ {
		if set[s[i]] {
			return i
		}
	}
	return -1
}
