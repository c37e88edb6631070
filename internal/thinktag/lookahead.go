package thinktag

// lookahead reads on from an opening tag that follows pending backtick runs, to find out whether
// one of them is closed before the paragraph ends: then the tag is inside a code span. It reads
// the raw text in pieces, as a stream delivers it, and keeps its place between them.
type lookahead struct {
	done  bool // decided
	found bool // a closing run was found, ending at end (relative to the tag); spans[k] is its length
	end   int
	k     int

	pos  int     // bytes read
	stop int     // where the paragraph ended, when it did
	last runEnds // the end of the last run of each length read
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
func (l *lookahead) feed(s string, spans *runSet) {
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
				l.done, l.stop = true, base+i
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
				l.done, l.stop = true, base+i
			default:
				l.st = laBody
			}
		case laFence:
			switch {
			case c == l.ch:
				l.n++
				i++
			case l.n >= 3 && l.ch == '~':
				l.done, l.stop = true, base+i
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
				l.done, l.stop = true, base+i // the line opens a fence
				continue
			}
			l.closeAt(l.n, l.rEnd, spans) // not a fence: its first run is an ordinary one
			l.st, l.n = laRun, 0
		}
	}
}

// finish decides at the end of the text, which ends the paragraph.
func (l *lookahead) finish(spans *runSet) {
	switch {
	case l.st == laRun, l.st == laFence && l.ch == '`' && l.n < 3:
		l.closeAt(l.n, l.pos, spans)
	}
	if !l.done {
		l.done, l.stop = true, l.pos
	}
}

// closeAt takes a run of n backticks ending at end: it decides the lookahead if a pending run
// has that length.
func (l *lookahead) closeAt(n, end int, spans *runSet) {
	l.last.set(n, end)
	if k := spans.find(n); k >= 0 {
		l.done, l.found, l.end, l.k = true, true, end, k
	}
}

// paragraph remembers, for the rest of a paragraph that a lookahead read to its end, the last run
// of each length in it. A later tag in that paragraph needs no second reading: its pending runs
// are closed only if a run of their length ends after it. So a paragraph is read ahead at most
// once however many tags follow unmatched runs in it, and finding a closing run reads only text
// that is then delivered as code.
type paragraph struct {
	from, end int     // offsets in the reply: the tag that looked ahead, the paragraph end
	last      runEnds // as offsets in the reply
}

// paragraph records what l read from the tag at offset at, once l found no closing run.
func (l *lookahead) paragraph(at int) paragraph {
	p := paragraph{from: at, end: at + l.stop, last: l.last}
	p.last.shift(at)
	return p
}

// literal reports whether the tag at offset at is known to be outside every code span the
// pending runs could open.
func (p *paragraph) literal(at int, spans []int) bool {
	if at <= p.from || at >= p.end {
		return false
	}
	for _, n := range spans {
		if e, ok := p.last.get(n); ok && e > at {
			return false
		}
	}
	return true
}

// runEnds maps a run length to the end of the last run of that length. Text has few distinct
// lengths, kept inline; a map takes the rest.
type runEnds struct {
	n     int
	small [8]struct{ len, end int }
	more  map[int]int
}

func (r *runEnds) set(n, end int) {
	for i := range r.small[:r.n] {
		if r.small[i].len == n {
			r.small[i].end = end
			return
		}
	}
	if r.n < len(r.small) {
		r.small[r.n] = struct{ len, end int }{n, end}
		r.n++
		return
	}
	if r.more == nil {
		r.more = make(map[int]int)
	}
	r.more[n] = end
}

func (r *runEnds) get(n int) (end int, ok bool) {
	for _, e := range r.small[:r.n] {
		if e.len == n {
			return e.end, true
		}
	}
	end, ok = r.more[n]
	return end, ok
}

// shift adds d to every end. It changes a map shared with copies of r.
func (r *runEnds) shift(d int) {
	for i := range r.small[:r.n] {
		r.small[i].end += d
	}
	for n := range r.more {
		r.more[n] += d
	}
}
