package tokenjuice

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// Budgets, in characters, of the parts of a compacted text.
const (
	sampleBudget  = 560  // head, middle window and tail of ordinary lines
	salientBudget = 1600 // lines that explain a failure: errors, warnings, locations
	maxLineChars  = 400  // longer lines are cut in the middle
)

var genericRule = &rule{id: "generic", family: "generic", match: func(*command, *simple) bool { return true }, reduce: reduceGeneric, streams: true}

// salientRE finds lines that explain a failure: error words and file:line locations.
var salientRE = regexp.MustCompile(`(?i)\b(error|errors|err|fail|failed|failure|failures|fatal|panic|panicked|exception|traceback|assert\w*|warning|denied|refused|not found|no such|cannot|can't|unable|undefined|invalid|missing|timed? ?out|killed|segmentation|unhandled|abort\w*)\b|\w\.[A-Za-z]{1,6}:\d+`)

func reduceGeneric(d *doc) (string, bool) {
	sel := newSelector(len(d.raw)/2, sampleBudget, isSalient, salientBudget, "lines")
	feedScanner(d.raw, condensePipeline(sel))
	return strings.Join(sel.out, "\n"), true
}

// salientWords are the stems salientRE looks for, lower case; a line without any of them (and
// without a file:line location) cannot match, and most lines of a big log have none.
var salientWords = [][]byte{[]byte("err"), []byte("fail"), []byte("fatal"), []byte("panic"), []byte("exception"),
	[]byte("traceback"), []byte("assert"), []byte("warn"), []byte("denied"), []byte("refused"), []byte("not found"),
	[]byte("no such"), []byte("cannot"), []byte("can't"), []byte("unable"), []byte("undefined"), []byte("invalid"),
	[]byte("missing"), []byte("time"), []byte("killed"), []byte("segmentation"), []byte("unhandled"), []byte("abort")}

// isSalient is salientRE.Match with a cheap prefilter; it allocates nothing for lines of up to
// 512 bytes.
func isSalient(l []byte) bool {
	var buf [512]byte
	if len(l) > len(buf) {
		return salientRE.Match(l)
	}
	low := buf[:len(l)]
	for i, c := range l {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	for _, w := range salientWords {
		if bytes.Contains(low, w) {
			return salientRE.Match(l)
		}
	}
	return hasLocation(l) && salientRE.Match(l)
}

func isSalientString(l string) bool { return isSalient([]byte(l)) }

// text is what the allocation-free line tests accept.
type text interface{ ~string | ~[]byte }

// hasLocation reports whether l may hold a file:line location: ".ext:" and a digit, with a letter
// extension of 1 to 6 characters.
func hasLocation[T text](l T) bool {
	for i := 1; i+1 < len(l); i++ {
		if l[i] != ':' || l[i+1] < '0' || l[i+1] > '9' {
			continue
		}
		j := i - 1
		for j >= 0 && (l[j] >= 'a' && l[j] <= 'z' || l[j] >= 'A' && l[j] <= 'Z') {
			j--
		}
		if n := i - 1 - j; n >= 1 && n <= 6 && j >= 1 && l[j] == '.' {
			return true
		}
	}
	return false
}

// similar reports whether a and b are equal once every run of digits, and every run of seven or
// more hex digits, counts as the same token. It allocates nothing: on a 50 MB log it runs once per
// line, where a regexp replacement dominated the whole compaction.
func similar[T text](a, b T) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, rb := varRun(a, i), varRun(b, j)
		switch {
		case ra > 0 && rb > 0:
			i += ra
			j += rb
		case ra > 0 || rb > 0 || a[i] != b[j]:
			return false
		default:
			i++
			j++
		}
	}
	return i == len(a) && j == len(b)
}

// varRun returns the length of the variable token at s[i]: a run of digits, or a run of at least
// seven hex digits; 0 if there is none.
func varRun[T text](s T, i int) int {
	k, digits := i, 0
	for k < len(s) && isHex(s[k]) {
		if s[k] <= '9' {
			digits++
		}
		k++
	}
	switch n := k - i; {
	case n == 0:
		return 0
	case digits == n:
		return n
	case n >= 7 && digits > 0:
		return n
	}
	// Letters a-f followed or preceded by digits in a short run: only the leading digits vary.
	k = i
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	return k - i
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

var (
	goroutineRE = regexp.MustCompile(`^goroutine \d+ \[.*\]:$`)
	pyTraceRE   = regexp.MustCompile(`^\s*Traceback \(most recent call last\):`)
	pyFrameRE   = regexp.MustCompile(`^\s+File ".*", line \d+`)
	jvmFrameRE  = regexp.MustCompile(`^\s+at [\w$.<>/]+\(.*\)$|^\s+\.\.\. \d+ more$`)
	jsFrameRE   = regexp.MustCompile(`^\s+at .+(\(.*:\d+:\d+\)|:\d+:\d+|\(<anonymous>\)|\(native\))$`)
)

// Frames kept of each kind of stack trace.
const (
	keepJSFrames  = 4
	keepJVMFrames = 6
	keepPyFrames  = 3 // the innermost ones, plus the outermost
	keepGoFrames  = 8 // of the first goroutine
)

// isFrameStart is a cheap test before the frame regexps: frames are indented and start with "at "
// (or "... N more").
func isFrameStart(l []byte) bool {
	t := bytes.TrimLeft(l, " \t")
	return len(t) < len(l) && (bytes.HasPrefix(t, []byte("at ")) || bytes.HasPrefix(t, []byte("... ")))
}

// traceStage shortens stack traces: a Go panic keeps its message and the first goroutine's top
// frames and counts the other goroutines; a Python traceback keeps its outermost and innermost
// frames and the exception; JVM and JavaScript traces keep their top frames. It holds at most a
// few frames.
type traceStage struct {
	next stage
	mode traceMode

	goroutines    int // goroutine headers seen
	frames        int // frame lines of the first goroutine, or frames of a JVM/JS run
	later         int // goroutines in the current run of later ones
	laterInFrames bool

	pyN     int        // frames of the current traceback
	pyFirst [][]byte   // its outermost frame
	pyLast  [][][]byte // its innermost frames, up to keepPyFrames
	pyCur   [][]byte   // the frame being read
	pyCut   int        // lines of the frame being read beyond maxFrameLines

	re      *regexp.Regexp
	keep    int
	held    []byte
	heldOff int
	scratch []byte
}

type traceMode int

const (
	traceNormal traceMode = iota
	traceFirstGoroutine
	traceLaterGoroutines
	tracePython
	traceFrames
)

// maxFrameLines bounds the lines kept of one Python frame (source line, caret markers).
const maxFrameLines = 8

func isGoroutineHeader(l []byte) bool {
	return bytes.HasPrefix(l, []byte("goroutine ")) && goroutineRE.Match(l)
}

func (t *traceStage) line(l []byte, off int) {
	switch t.mode {
	case traceFirstGoroutine:
		if len(l) > 0 && !isGoroutineHeader(l) {
			t.frames++
			if t.frames <= 2*keepGoFrames {
				t.next.line(l, off)
			}
			return
		}
		t.endMode(off)
	case traceLaterGoroutines:
		switch {
		case isGoroutineHeader(l):
			t.later++
			t.laterInFrames = true
			return
		case len(l) == 0:
			t.laterInFrames = false
			return
		case t.laterInFrames:
			return
		}
		t.endMode(off)
	case tracePython:
		switch {
		case pyFrameRE.Match(l):
			t.pyPush()
			t.pyCur = append(t.pyCur, bytes.Clone(l))
			t.pyN++
			return
		case len(t.pyCur) > 0 && bytes.HasPrefix(l, []byte("    ")):
			if len(t.pyCur) < maxFrameLines {
				t.pyCur = append(t.pyCur, bytes.Clone(l))
			} else {
				t.pyCut++
			}
			return
		}
		t.endMode(off)
	case traceFrames:
		if t.re.Match(l) {
			t.frames++
			switch {
			case t.frames <= t.keep:
				t.next.line(l, off)
			case t.frames == t.keep+1:
				t.held, t.heldOff = append(t.held[:0], l...), off
			}
			return
		}
		t.endMode(off)
	}
	t.normal(l, off)
}

func (t *traceStage) normal(l []byte, off int) {
	switch {
	case isGoroutineHeader(l):
		t.goroutines++
		if t.goroutines == 1 {
			t.next.line(l, off)
			t.mode, t.frames = traceFirstGoroutine, 0
		} else {
			t.mode, t.later, t.laterInFrames = traceLaterGoroutines, 1, true
		}
	case bytes.Contains(l, []byte("Traceback (")) && pyTraceRE.Match(l):
		t.next.line(l, off)
		t.mode, t.pyN, t.pyFirst, t.pyLast, t.pyCur = tracePython, 0, nil, nil, nil
	case isFrameStart(l) && (jvmFrameRE.Match(l) || jsFrameRE.Match(l)):
		t.keep, t.re = keepJSFrames, jsFrameRE
		if jvmFrameRE.Match(l) {
			t.keep, t.re = keepJVMFrames, jvmFrameRE
		}
		t.next.line(l, off)
		t.mode, t.frames = traceFrames, 1
	default:
		t.next.line(l, off)
	}
}

// pyPush files the frame being read as the outermost or among the innermost ones.
func (t *traceStage) pyPush() {
	if len(t.pyCur) == 0 {
		return
	}
	if t.pyCut > 0 {
		t.pyCur = append(t.pyCur, fmt.Appendf(nil, "    … %s omitted …", plural(t.pyCut, "line")))
		t.pyCut = 0
	}
	if t.pyFirst == nil {
		t.pyFirst = t.pyCur
	} else {
		t.pyLast = append(t.pyLast, t.pyCur)
		if len(t.pyLast) > keepPyFrames {
			t.pyLast = t.pyLast[1:]
		}
	}
	t.pyCur = nil
}

// endMode closes the trace being read, emitting what it held and what it left out.
func (t *traceStage) endMode(off int) {
	emit := func(format string, n int) {
		t.scratch = fmt.Appendf(t.scratch[:0], format, n)
		t.next.line(t.scratch, off)
	}
	switch t.mode {
	case traceFirstGoroutine:
		if t.frames > 2*keepGoFrames {
			emit("… %d frame lines omitted …", t.frames-2*keepGoFrames)
		}
	case traceLaterGoroutines:
		emit("… %d more goroutines omitted …", t.later)
	case tracePython:
		t.pyPush()
		for _, l := range t.pyFirst {
			t.next.line(l, off)
		}
		if t.pyN > keepPyFrames+1 {
			emit("… %d frames omitted …", t.pyN-keepPyFrames-1)
		}
		for _, f := range t.pyLast {
			for _, l := range f {
				t.next.line(l, off)
			}
		}
		t.pyFirst, t.pyLast = nil, nil
	case traceFrames:
		switch {
		case t.frames == t.keep+1:
			t.next.line(t.held, t.heldOff)
		case t.frames > t.keep+1:
			emit("… %d frames omitted …", t.frames-t.keep)
		}
	}
	t.mode = traceNormal
}

func (t *traceStage) end() {
	t.endMode(math.MaxInt)
	t.next.end()
}
