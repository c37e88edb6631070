package tokenjuice

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Reducers that may see very large outputs (logs, long listings) process them as a stream of lines
// through a pipeline of stages: each stage looks at one line at a time and holds a bounded number
// of them, so that compacting a 50 MB log allocates a small, fixed amount whatever its size.

// stage is one step of a line pipeline. The line passed to line is valid only during the call: a
// stage copies what it keeps. end flushes what the stage still holds. Stages are not safe for
// concurrent use; one pipeline serves one Compact call.
type stage interface {
	line(l []byte, off int)
	end()
}

// condensePipeline returns the shared transforms in front of sink: progress meters are reduced to
// their final state, long lines are cut, stack
// traces shortened, blocks that repeat earlier ones replaced by a note, and runs of repeated or
// similar lines collapsed.
func condensePipeline(sink stage) stage {
	return &meterStage{next: &clipStage{next: &traceStage{next: &repeatStage{next: &runStage{next: sink}}}}}
}

// feedLines pushes lines into st; a line's offset is its index. Stages treat the lines they are
// given as read-only, so a string is passed as a view of its bytes rather than a copy.
func feedLines(lines []string, st stage) {
	for i, l := range lines {
		st.line(unsafe.Slice(unsafe.StringData(l), len(l)), i)
	}
	st.end()
}

// counter counts the lines that reach it.
type counter struct{ n int }

func (c *counter) line([]byte, int) { c.n++ }
func (c *counter) end()             {}

// feedScanner pushes every normalized line of b into st.
func feedScanner(b []byte, st stage) {
	s := newLineScanner(b)
	for {
		l, off, ok := s.next()
		if !ok {
			break
		}
		st.line(l, off)
	}
	st.end()
}

// collector keeps every line it receives; it is the sink of condense.
type collector struct{ lines []string }

func (c *collector) line(l []byte, _ int) { c.lines = append(c.lines, string(l)) }
func (c *collector) end()                 {}

// condense applies the shared transforms to lines (see condensePipeline).
func condense(lines []string) []string {
	c := &collector{lines: make([]string, 0, len(lines))}
	feedLines(lines, condensePipeline(c))
	return c.lines
}

// clipStage cuts lines longer than maxLineChars in the middle.
type clipStage struct {
	next stage
	buf  []byte
}

func (c *clipStage) line(l []byte, off int) {
	if len(l) <= maxLineChars || utf8.RuneCount(l) <= maxLineChars {
		c.next.line(l, off)
		return
	}
	c.buf = clipBytes(c.buf[:0], l, maxLineChars)
	c.next.line(c.buf, off)
}

func (c *clipStage) end() { c.next.end() }

// clipBytes appends to dst the first two thirds and the end of l, max runes in all with "…"
// between them.
func clipBytes(dst, l []byte, max int) []byte {
	head := max * 2 / 3
	tail := max - head - 1
	i := 0
	for n := 0; n < head; n++ {
		_, size := utf8.DecodeRune(l[i:])
		i += size
	}
	j := len(l)
	for n := 0; n < tail; n++ {
		_, size := utf8.DecodeLastRune(l[:j])
		j -= size
	}
	dst = append(dst, l[:i]...)
	dst = append(dst, "…"...)
	return append(dst, l[j:]...)
}

// runStage collapses runs of identical lines to one line with a count, and runs of three or more
// lines that differ only in numbers and hex ids (timestamps, counters, addresses) to the first and
// the last of them around a gap line. It holds the first and the last line of the current run.
// similarLastMax is the longest last line of a run of similar lines that is shown.
const similarLastMax = 120

type runStage struct {
	next           stage
	first, last    []byte
	firstOff       int
	lastOff        int
	active         bool
	ident, similar int // lines of the run identical to first; similar to it (identical included)
	identOpen      bool
	scratch        []byte
}

func (r *runStage) line(l []byte, off int) {
	if !r.active {
		r.start(l, off)
		return
	}
	if r.identOpen && bytes.Equal(l, r.first) {
		r.ident++
		r.similar++
		r.last, r.lastOff = append(r.last[:0], l...), off
		return
	}
	r.identOpen = false
	if r.ident > 1 {
		r.flush()
		r.start(l, off)
		return
	}
	if len(r.first) > 0 && similar(l, r.first) {
		r.similar++
		r.last, r.lastOff = append(r.last[:0], l...), off
		return
	}
	r.flush()
	r.start(l, off)
}

func (r *runStage) start(l []byte, off int) {
	r.first, r.firstOff = append(r.first[:0], l...), off
	r.active, r.ident, r.similar, r.identOpen = true, 1, 1, true
}

func (r *runStage) flushIdentical() {
	r.scratch = append(append(r.scratch[:0], r.first...), "  (×"...)
	r.scratch = append(strconv.AppendInt(r.scratch, int64(r.ident), 10), ')')
	r.next.line(r.scratch, r.firstOff)
	r.active = false
}

// flush emits the current run.
func (r *runStage) flush() {
	switch {
	case !r.active:
		return
	case len(r.first) == 0:
		// Blank lines are never collapsed.
		for range r.ident {
			r.next.line(r.first, r.firstOff)
		}
	case r.ident > 1:
		r.flushIdentical()
	case r.similar >= 3:
		// The first and the last line of a run of short lines show its range (the first and last
		// item of a listing, the first and final state of a counter); the last of a run of long
		// lines (log records that differ in their time stamps) would repeat the first.
		r.next.line(r.first, r.firstOff)
		showLast := len(r.last) <= similarLastMax
		omitted := r.similar - 1
		if showLast {
			omitted--
		}
		r.scratch = fmt.Appendf(r.scratch[:0], "… %d similar lines omitted …", omitted)
		r.next.line(r.scratch, r.firstOff)
		if showLast {
			r.next.line(r.last, r.lastOff)
		}
	case r.similar == 2:
		r.next.line(r.first, r.firstOff)
		r.next.line(r.last, r.lastOff)
	default:
		r.next.line(r.first, r.firstOff)
	}
	r.active = false
}

func (r *runStage) end() {
	r.flush()
	r.next.end()
}

// ---- selection ----

// item is a line kept by a selector, with its position among the selector's input.
type item struct {
	idx, off, chars int
	text            string
}

// ring keeps the last lines pushed into it in slots whose buffers are reused, so that a window
// sliding over a long output copies bytes but allocates only when it needs more slots.
type ring struct {
	slots      []slot
	start, len int
	chars      int
}

type slot struct {
	idx, off, chars int
	buf             []byte
}

func (r *ring) push(l []byte, idx, off, chars int) {
	if r.len == len(r.slots) {
		grown := make([]slot, 2*len(r.slots)+4)
		for i := range r.len {
			grown[i] = r.slots[(r.start+i)%len(r.slots)]
		}
		// Keep the buffers of the slots beyond the live ones (none yet) for reuse.
		r.slots, r.start = grown, 0
	}
	s := &r.slots[(r.start+r.len)%len(r.slots)]
	s.idx, s.off, s.chars, s.buf = idx, off, chars, append(s.buf[:0], l...)
	r.len++
	r.chars += chars
}

func (r *ring) at(i int) *slot { return &r.slots[(r.start+i)%len(r.slots)] }

func (r *ring) popFront() {
	r.chars -= r.at(0).chars
	r.start = (r.start + 1) % len(r.slots)
	r.len--
}

// trim drops the oldest lines while the others still hold at least room characters.
func (r *ring) trim(room int) {
	for r.len > 1 && r.chars-r.at(0).chars >= room {
		r.popFront()
	}
}

func (r *ring) items() []item {
	out := make([]item, r.len)
	for i := range r.len {
		s := r.at(i)
		out[i] = item{idx: s.idx, off: s.off, chars: s.chars, text: string(s.buf)}
	}
	return out
}

// windows keeps the candidates of a head/middle/tail sample of a stream of lines (see sampleKeep):
// the first lines up to the head's share of the budget, the lines around the middle of the output
// (by offset, since the number of lines is not known until the end) and the last lines, each
// buffered with slack for lines that a later exclusion removes. What it holds is bounded by the
// budget, whatever the length of the stream.
type windows struct {
	headRoom, midRoom, tailRoom int
	slack                       int
	half                        int  // where the middle window starts
	byIndex                     bool // half counts lines offered, not output offsets

	count              int // lines offered
	first3             []item
	all                []item
	allChars, allLimit int
	allOK              bool
	head               []item
	headChars          int
	headOpen           bool
	pre, tail          ring
	post               []item
	postChars          int
	centered, postOpen bool
}

func newWindows(budget, slack, allLimit, half int) *windows {
	head := budget * headShare / 100
	mid := budget * midShare / 100
	return &windows{headRoom: head, midRoom: mid, tailRoom: budget - head - mid, slack: slack,
		half: half, allLimit: allLimit, allOK: true, headOpen: true, postOpen: true}
}

// offer shows the line numbered idx to the windows; it reports whether the line went into the head
// within the head's share (a final decision: the head is the first lines that fit).
func (w *windows) offer(l []byte, idx, off int) (inHead bool) {
	c := utf8.RuneCount(l) + 1
	w.count++
	// The line is copied once, and only if some window keeps it.
	it := item{idx: idx, off: off, chars: c}
	pos := off
	if w.byIndex {
		pos = idx
	}
	keep := len(w.first3) < 3 || w.allOK && w.allChars+c <= w.allLimit ||
		w.headOpen && (len(w.head) == 0 || w.headChars+c <= w.headRoom+w.slack) ||
		(w.centered || pos >= w.half) && w.postOpen
	if keep {
		it.text = string(l)
	}
	if len(w.first3) < 3 {
		w.first3 = append(w.first3, it)
	}
	if w.allOK {
		if w.allChars+c <= w.allLimit {
			w.all = append(w.all, it)
			w.allChars += c
		} else {
			w.allOK, w.all = false, nil
		}
	}
	if w.headOpen {
		if len(w.head) == 0 || w.headChars+c <= w.headRoom+w.slack {
			w.head = append(w.head, it)
			w.headChars += c
			inHead = w.headChars <= w.headRoom || len(w.head) == 1
		} else {
			w.headOpen = false
		}
	}
	// The middle: a ring of the lines before the middle offset, and the lines from it on.
	midCap := w.midRoom + w.slack
	if !w.centered && pos >= w.half {
		w.centered = true
	}
	switch {
	case !w.centered:
		w.pre.push(l, idx, off, c)
		w.pre.trim(midCap)
	case w.postOpen:
		w.post = append(w.post, it)
		w.postChars += c
		w.postOpen = w.postChars <= midCap
	}
	w.tail.push(l, idx, off, c)
	w.tail.trim(w.tailRoom + w.slack)
	return inHead
}

// pick returns the lines to keep, in order: all of them if they fit the budget, else the head, the
// tail and the middle window. Lines for which skip returns true are left out as if they had never
// been offered (they must be among the buffered ones; see slack).
func (w *windows) pick(skip func(idx int) bool) []item {
	if skip == nil {
		skip = func(int) bool { return false }
	}
	pre, tail := w.pre.items(), w.tail.items()
	skipped := map[int]int{}
	for _, buf := range [][]item{w.first3, w.all, w.head, pre, w.post, tail} {
		for _, it := range buf {
			if skip(it.idx) {
				skipped[it.idx] = it.chars
			}
		}
	}
	n := w.count - len(skipped)
	if n <= 0 {
		return nil
	}
	if w.allOK {
		total := w.allChars
		for _, c := range skipped {
			total -= c
		}
		if total <= w.headRoom+w.midRoom+w.tailRoom || n <= 3 {
			return without(w.all, skip)
		}
	}
	if n <= 3 {
		var u []item
		for _, buf := range [][]item{w.first3, w.head, pre, w.post, tail} {
			u = append(u, without(buf, skip)...)
		}
		return uniqueByIdx(u)
	}
	var out []item
	taken := map[int]bool{}
	take := func(it item, room *int, first bool) bool {
		if it.chars > *room && !first {
			return false
		}
		*room -= it.chars
		taken[it.idx] = true
		out = append(out, it)
		return true
	}
	lastHead := -1
	room := w.headRoom
	for _, it := range without(w.head, skip) {
		if !take(it, &room, lastHead < 0) {
			break
		}
		lastHead = it.idx
	}
	firstTail := math.MaxInt
	room = w.tailRoom
	tail = without(tail, skip)
	for i := len(tail) - 1; i >= 0; i-- {
		it := tail[i]
		if it.idx <= lastHead || !take(it, &room, i == len(tail)-1) {
			break
		}
		firstTail = it.idx
	}
	// The middle window grows outwards from the line at the middle offset: c, c-1, c+1, c-2, ...
	pre, post := without(pre, skip), without(w.post, skip)
	room = w.midRoom
	for step, p, q := 0, len(pre)-1, 0; ; step++ {
		var it item
		if step%2 == 0 {
			if q >= len(post) {
				break
			}
			it = post[q]
			q++
		} else {
			if p < 0 {
				break
			}
			it = pre[p]
			p--
		}
		if it.idx <= lastHead || it.idx >= firstTail || taken[it.idx] || !take(it, &room, false) {
			break
		}
	}
	slices.SortFunc(out, func(a, b item) int { return a.idx - b.idx })
	return out
}

func without(items []item, skip func(int) bool) []item {
	out := make([]item, 0, len(items))
	for _, it := range items {
		if !skip(it.idx) {
			out = append(out, it)
		}
	}
	return out
}

func uniqueByIdx(items []item) []item {
	slices.SortFunc(items, func(a, b item) int { return a.idx - b.idx })
	return slices.CompactFunc(items, func(a, b item) bool { return a.idx == b.idx })
}

// selector is the sink that picks the lines of a compacted text: every line when they fit the
// budget; otherwise a head/middle/tail sample of all lines plus a sample of the salient ones
// (errors, locations) within their own budget, in order, with a gap line for each run left out.
type selector struct {
	main, sal *windows
	salient   func([]byte) bool
	unit      string
	out       []string

	fill     []string          // every line offered, when known: see fillGaps
	pin      func([]byte) bool // pinned lines are kept whole up to pinBudget (see pin.go)
	pinned   []item
	pinChars int
}

// newSelector makes a selector whose middle window starts at the first line at or after offset
// half.
func newSelector(half, budget int, salient func([]byte) bool, salBudget int, unit string) *selector {
	s := &selector{main: newWindows(budget, 0, budget+salBudget/2, half), salient: salient, unit: unit}
	if salient != nil && salBudget > 0 {
		slack := s.main.midRoom + s.main.tailRoom + 2*maxLineChars
		s.sal = newWindows(salBudget, slack, salBudget+slack, half)
	}
	return s
}

// byIndex makes the selector centre its middle window on a line number rather than an offset.
func (s *selector) byIndex() {
	s.main.byIndex = true
	if s.sal != nil {
		s.sal.byIndex = true
	}
}

// pinning makes the selector keep the lines a pinner pins (failures: see pin.go).
func (s *selector) pinning() *selector {
	p := &pinner{}
	s.pin = p.pin
	return s
}

func (s *selector) line(l []byte, off int) {
	idx := s.main.count
	inHead := s.main.offer(l, idx, off)
	if s.pin != nil && s.pin(l) {
		if c := utf8.RuneCount(l) + 1; s.pinChars+c <= pinBudget {
			s.pinned = append(s.pinned, item{idx: idx, off: off, chars: c, text: string(l)})
			s.pinChars += c
			return
		}
	}
	if !inHead && s.sal != nil && s.salient(l) {
		s.sal.offer(l, idx, off)
	}
}

func (s *selector) end() {
	if s.main.allOK {
		s.out = itemsText(s.main.all)
		return
	}
	kept := s.main.pick(nil)
	if s.sal != nil {
		inMain := make(map[int]bool, len(kept))
		for _, it := range kept {
			inMain[it.idx] = true
		}
		kept = uniqueByIdx(append(kept, s.sal.pick(func(i int) bool { return inMain[i] })...))
	}
	if len(s.pinned) > 0 {
		kept = uniqueByIdx(append(kept, s.pinned...))
	}
	if s.fill != nil {
		kept = fillGaps(kept, s.fill)
	}
	s.out = renderItems(kept, s.main.count, s.unit)
}

// fillGaps adds to kept each line that is alone between two kept ones and no longer than the gap
// line that would replace it: saying it was left out costs more than showing it.
func fillGaps(kept []item, lines []string) []item {
	var add []item
	next := 0
	for _, it := range append(kept, item{idx: len(lines)}) {
		if it.idx == next+1 && next < len(lines) {
			if c := charCount(lines[next]); c <= len(gapLine(1, "lines")) {
				add = append(add, item{idx: next, chars: c + 1, text: lines[next]})
			}
		}
		next = it.idx + 1
	}
	if len(add) == 0 {
		return kept
	}
	return uniqueByIdx(append(kept, add...))
}

func itemsText(items []item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.text
	}
	return out
}

// renderItems returns the kept lines in order with a gap line for each run of left-out ones.
func renderItems(kept []item, n int, unit string) []string {
	out := make([]string, 0, 2*len(kept)+1)
	next := 0
	for _, it := range kept {
		if it.idx > next {
			out = append(out, gapLine(it.idx-next, unit))
		}
		out = append(out, it.text)
		next = it.idx + 1
	}
	if n > next {
		out = append(out, gapLine(n-next, unit))
	}
	return out
}

// selectLines keeps every line when they fit the budget; otherwise the salient lines (up to their
// own budget, sampled if there are more) and a sample of the rest, in order, with gap lines. The
// middle window is centred on the middle line.
func selectLines(lines []string, budget int, salient func([]byte) bool, salBudget int) []string {
	s := newSelector((len(lines)-1)/2, budget, salient, salBudget, "lines")
	s.byIndex()
	feedLines(lines, s)
	return s.out
}

// selectCondensed is selectLines(condense(lines), ...): the pipeline runs twice, once to collect
// the condensed lines (to centre the middle window and fill one-line gaps) and once to select.
func selectCondensed(lines []string, budget int, salient func([]byte) bool, salBudget int) []string {
	return selectCondensedWith(lines, budget, salient, salBudget, false)
}

// selectFailure is selectCondensed for the output of a command that may have failed (tests,
// builds, installs): it also keeps every pinned line (see pin.go).
func selectFailure(lines []string, budget int, salient func([]byte) bool, salBudget int) []string {
	return selectCondensedWith(lines, budget, salient, salBudget, true)
}

func selectCondensedWith(lines []string, budget int, salient func([]byte) bool, salBudget int, pin bool) []string {
	c := &collector{lines: make([]string, 0, len(lines))}
	feedLines(lines, condensePipeline(c))
	s := newSelector((len(c.lines)-1)/2, budget, salient, salBudget, "lines")
	s.byIndex()
	s.fill = c.lines
	if pin {
		s.pinning()
	}
	feedLines(lines, condensePipeline(s))
	return s.out
}
