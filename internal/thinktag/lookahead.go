package thinktag

// lookahead reads on from an opening tag that follows pending backtick runs, to find out whether
// one of them is closed before the paragraph ends: then the tag is inside a code span. It reads
// the raw text in pieces, as a stream delivers it, and keeps its place between them.
type lookahead struct {
	done  bool // decided
	found bool // a closing run was found, ending at end (relative to the tag); spans[k] is its length
	end   int
	k     int

	pos  int // bytes read
	st   laState
	n    int  // spaces at a line start, then the length of the run being read
	ch   byte // the character of a line's first run
	rEnd int  // where a line's first run of three or more backticks ended
}

type laState uint8

const (
	laBody  laState = iota // inside a line
	laRun                  // a backtick run inside a line
	laLine                 // a line's indentation: the line may be blank or open a fence
	laBlank                // blanks only so far, too many or mixed for a fence
	laFence                // the line's first run of backticks or tildes
	laInfo                 // after three or more backticks: a fence unless a backtick follows
)

// feed reads the next piece of text. spans are the pending run lengths, oldest first.
func (l *lookahead) feed(s string, spans []int) {
	base := l.pos
	l.pos += len(s)
	for i := 0; i < len(s) && !l.done; {
		c := s[i]
		switch l.st {
		case laBody:
			j := index(s[i:], &runOrLine)
			if j < 0 {
				return
			}
			i += j
			if s[i] == '\n' {
				l.st, l.n = laLine, 0
				i++
			} else {
				l.st, l.n = laRun, 0
			}
		case laRun:
			if c == '`' {
				l.n++
				i++
				continue
			}
			l.closeAt(l.n, base+i, spans)
			l.st = laBody
		case laLine:
			switch {
			case c == ' ' && l.n < 3:
				l.n++
				i++
			case isBlank(c):
				l.st = laBlank
				i++
			case c == '\n':
				l.done = true
			case c == '`' || c == '~':
				l.st, l.ch, l.n = laFence, c, 1
				i++
			default:
				l.st = laBody
			}
		case laBlank:
			switch {
			case isBlank(c):
				i++
			case c == '\n':
				l.done = true
			default:
				l.st = laBody
			}
		case laFence:
			switch {
			case c == l.ch:
				l.n++
				i++
			case l.n >= 3 && l.ch == '~':
				l.done = true
			case l.n >= 3:
				l.st, l.rEnd = laInfo, base+i
			case l.ch == '`':
				l.closeAt(l.n, base+i, spans)
				l.st = laBody
			default:
				l.st = laBody
			}
		case laInfo:
			j := index(s[i:], &runOrLine)
			if j < 0 {
				return
			}
			i += j
			if s[i] == '\n' {
				l.done = true // the line opens a fence
				continue
			}
			l.closeAt(l.n, l.rEnd, spans) // not a fence: its first run is an ordinary one
			l.st, l.n = laRun, 0
		}
	}
}

// finish decides at the end of the text, which ends the paragraph.
func (l *lookahead) finish(spans []int) {
	switch {
	case l.st == laRun, l.st == laFence && l.ch == '`' && l.n < 3:
		l.closeAt(l.n, l.pos, spans)
	}
	l.done = true
}

// closeAt takes a run of n backticks ending at end: it decides the lookahead if a pending run
// has that length.
func (l *lookahead) closeAt(n, end int, spans []int) {
	for k, m := range spans {
		if m == n {
			l.done, l.found, l.end, l.k = true, true, end, k
			return
		}
	}
}
