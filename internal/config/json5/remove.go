package json5

import (
	"sort"
)

// removeAll deletes the elements idx (ascending indices) of container c from src, the last
// first, each as if the text had been parsed again after the one before: the element, its
// comma and, when it sits on lines of its own, those lines; removing the last element when it
// has no comma also removes the comma before it, and an emptied container closes up to {} or [].
//
// Removing them one at a time, with a fresh parse and copy of the file for each, is quadratic
// in the duplicates of a key. Here the text is not copied until the end: the deletions are kept
// as spans of src, and each removal reads the text as they leave it. A removal reads the text
// before its element as written (the removals before it, of later elements, are all after that
// element's start) and the text after it only up to the end of its line, so each costs what its
// own lines hold, and the whole is linear in the size of the container.
func removeAll(src []byte, c *Node, idx []int) []byte {
	its := items(c)
	t := &liveText{src: src}
	commaGone := make(map[int]bool) // elements whose comma a removal took
	comma := func(i int) int {
		if commaGone[i] {
			return -1
		}
		return its[i].value.Comma
	}
	left := len(its)
	for k := len(idx) - 1; k >= 0; k-- {
		i := idx[k]
		it := its[i]
		v := it.value
		end := v.End
		if cm := comma(i); cm >= 0 {
			end = cm + 1
		}
		if tail, eol := t.lineTail(end); eol && startsLine(src, it.start) {
			// The element owns its lines, along with a comment at the end of its last line.
			tail = t.lineEnd(tail)
			t.remove(lineStart(src, it.start), t.afterLineBreak(tail))
			if comma(i) < 0 && i > 0 && comma(i-1) >= 0 {
				cm := comma(i - 1)
				t.remove(cm, cm+1)
				commaGone[i-1] = true
			}
		} else {
			switch {
			case comma(i) >= 0:
				to := t.next(comma(i) + 1)
				for to < len(src) && (src[to] == ' ' || src[to] == '\t') {
					to = t.next(to + 1)
				}
				t.remove(it.start, to)
			case i > 0:
				t.remove(its[i-1].value.End, v.End) // the comma before goes with it
				commaGone[i-1] = true
			default:
				t.remove(it.start, v.End)
			}
		}
		if left == 1 {
			// An emptied container whose inside is only whitespace closes up to {} or [].
			open := c.Start
			close := t.next(open + 1)
			for close < len(src) && isASCIISpace(src[close]) {
				close = t.next(close + 1)
			}
			if close < len(src) && (src[close] == '}' || src[close] == ']') {
				t.remove(open+1, close)
			}
		}
		left--
	}
	return t.bytes()
}

// liveText is src less the spans removed from it so far. Offsets are src's; a live offset is
// one whose byte has not been removed. The spans are disjoint and kept in descending order,
// since each removal lies before, or around, the ones made before it.
type liveText struct {
	src  []byte
	gone []span // descending by start
}

type span struct{ from, to int }

// next returns the first live offset at or after off (len(src) past the last).
func (t *liveText) next(off int) int {
	// The span holding off, if any, is the last whose start is at or before off.
	i := sort.Search(len(t.gone), func(i int) bool { return t.gone[i].from <= off })
	if i < len(t.gone) && off < t.gone[i].to {
		return t.gone[i].to // spans are never adjacent: its end is live
	}
	return off
}

// remove removes the live bytes of [from, to): from is live, to is live or len(src). Spans
// it covers or touches merge into it.
func (t *liveText) remove(from, to int) {
	if from >= to {
		return
	}
	// The spans that overlap or touch [from, to] are the last ones (they start at or after
	// from, every later removal being before them) unless a span lies wholly before from, as
	// the comma before an element does; those are found the same way from the end.
	i := len(t.gone)
	for i > 0 && t.gone[i-1].from <= to && t.gone[i-1].to >= from {
		i--
		from, to = min(from, t.gone[i].from), max(to, t.gone[i].to)
	}
	if i == len(t.gone) {
		// Nothing merged: insert in order. A new span is almost always the lowest.
		j := sort.Search(len(t.gone), func(j int) bool { return t.gone[j].from < from })
		t.gone = append(t.gone, span{})
		copy(t.gone[j+1:], t.gone[j:])
		t.gone[j] = span{from, to}
		return
	}
	t.gone = append(t.gone[:i], span{from, to})
}

// bytes returns the live text.
func (t *liveText) bytes() []byte {
	n := len(t.src)
	for _, s := range t.gone {
		n -= s.to - s.from
	}
	out := make([]byte, 0, n)
	at := 0
	for k := len(t.gone) - 1; k >= 0; k-- {
		out = append(out, t.src[at:t.gone[k].from]...)
		at = t.gone[k].to
	}
	return append(out, t.src[at:]...)
}

// lineTail is the package's lineTail read over the live text.
func (t *liveText) lineTail(off int) (contentEnd int, eol bool) {
	return lineTailLive(t.src, off, t.next)
}

// lineEnd returns the live offset of the line break at or after off, or len(src).
func (t *liveText) lineEnd(off int) int {
	i := t.next(off)
	for i < len(t.src) && t.src[i] != '\n' && t.src[i] != '\r' {
		i = t.next(i + 1)
	}
	return i
}

// afterLineBreak returns the live offset after the line break at off, if there is one.
func (t *liveText) afterLineBreak(off int) int { return afterLineBreakLive(t.src, off, t.next) }
