package tokenjuice

import (
	"bytes"
	"fmt"
	"math"
)

// Stack traces are long and mostly frames of the runtime, the standard library and the test
// harness; what explains a failure is its message and the frames of the program's own code. The
// trace stage keeps those: for each kind of trace it holds a bounded number of frames, decides
// which are the program's own, and says how many it left out.

var (
	goroutineRE = lazyRE(`^goroutine \d+ \[.*\]:$`)
	pyTraceRE   = lazyRE(`^\s*Traceback \(most recent call last\):`)
	pyFrameRE   = lazyRE(`^\s+File ".*", line \d+`)
	jvmFrameRE  = lazyRE(`^\s+at [\w$.<>/]+\(.*\)$|^\s+\.\.\. \d+ more$`)
	jsFrameRE   = lazyRE(`^\s+at .+(\(.*:\d+:\d+\)|:\d+:\d+|\(<anonymous>\)|\(native\))$`)
	// jsLibFrameRE are frames of Node's internals, of dependencies and of the JVM's own classes.
	jsLibFrameRE = lazyRE(`\(node:|at node:|\(<anonymous>\)|\(native\)|/node_modules/|^\s+at (java|javax|jdk|sun|kotlin|scala|org\.junit|junit)\.|^\s+\.\.\. \d+ more$`)
	goFileRE     = lazyRE(`^\t\S.*:\d+( \+0x[0-9a-f]+)?$`)
	raceFuncRE   = lazyRE(`^  \S.*\)$`)
	raceFileRE   = lazyRE(`^      \S.*:\d+ \+0x[0-9a-f]+$`)
	rustFrameRE  = lazyRE(`^\s+\d+: `)
	rustAtRE     = lazyRE(`^\s+at `)
	rustLibRE    = lazyRE(`^\s+\d+: +(std::|core::|alloc::|test::|__rustc::|<|rust_begin_unwind|__libc|_start)`)
	asanFrameRE  = lazyRE(`^\s+#\d+ 0x[0-9a-f]+ in `)
	asanLibRE    = lazyRE(` in (_start|__libc_\w+|__interceptor_\w+|__asan\w*)\b|\.\./sysdeps/|\.\./csu/|libsanitizer|\(/lib/|\(/usr/lib/`)
)

// Frames kept of each kind of stack trace.
const (
	keepJSFrames     = 4
	keepJVMFrames    = 6
	keepPyFrames     = 3 // the innermost ones, plus the outermost
	keepGoFrames     = 8 // own frames of a goroutine
	keepGoRoutines   = 6 // goroutines shown that run the program's own code
	keepRustFrames   = 6
	keepASanFrames   = 6
	maxHeldFrames    = 64 // frames held to choose from; later ones are only counted
	maxFrameLines    = 8  // lines kept of one Python frame (source line, caret markers)
	libFramesInFirst = 4  // frames of a first goroutine shown when it has none of its own
)

// isFrameStart is a cheap test before the frame regexps: frames are indented and start with "at "
// (or "... N more").
func isFrameStart(l []byte) bool {
	t := bytes.TrimLeft(l, " \t")
	return len(t) < len(l) && (bytes.HasPrefix(t, []byte("at ")) || bytes.HasPrefix(t, []byte("... ")))
}

func isGoroutineHeader(l []byte) bool {
	return bytes.HasPrefix(l, []byte("goroutine ")) && goroutineRE.Match(l)
}

// isGoFuncLine reports whether l is the function line of a Go frame: "pkg.F(args)",
// "pkg.(*T).M(...)", "panic({...})", "created by pkg.F in goroutine 1".
func isGoFuncLine(l []byte) bool {
	if len(l) == 0 || l[0] == ' ' || l[0] == '\t' {
		return false
	}
	if bytes.HasPrefix(l, []byte("created by ")) || bytes.Equal(l, []byte("...additional frames elided...")) {
		return true
	}
	i := bytes.IndexByte(l, '(')
	return i > 0 && l[len(l)-1] == ')' && bytes.IndexByte(l[:i], ' ') < 0
}

// frame is one held frame: one line (JS, JVM, sanitizers) or two (Go and Rust: the function and
// its location).
type frame struct {
	lines [2][]byte
	n     int
	off   int
	lib   bool
}

func (f *frame) add(l []byte) {
	if f.n < 2 {
		f.lines[f.n] = append(f.lines[f.n][:0], l...)
		f.n++
	}
}

// traceStage shortens stack traces. A Go panic keeps its message and, of each goroutine that runs
// the program's own code, the header and those frames (the panicking goroutine keeps its top
// frames if it has none of its own); a Python traceback keeps its outermost and innermost frames
// and the exception; JVM, JavaScript, Rust and sanitizer traces keep their first frame and the
// program's own frames; a sanitizer's shadow memory dump goes. It holds at most maxHeldFrames
// frames.
type traceStage struct {
	next stage
	mode traceMode

	frames  []frame // held frames of the current trace (or goroutine)
	nframes int     // frames of the current trace, held or not
	keep    int
	re      *lazyRegexp
	skipped int // lines of a shadow memory dump

	goHeader    []byte // the current goroutine's header
	goHeaderOff int
	goPending   bool // the last held Go frame has its function line only
	goroutines  int  // goroutine headers seen in this dump
	goShown     int
	goOmitted   int
	goroot      string // learned from the frames of runtime and testing functions
	goSeen      map[string]bool

	pyN     int        // frames of the current traceback
	pyFirst [][]byte   // its outermost frame
	pyLast  [][][]byte // its innermost frames, up to keepPyFrames
	pyCur   [][]byte   // the frame being read
	pyCut   int        // lines of the frame being read beyond maxFrameLines

	scratch []byte
}

type traceMode int

const (
	traceNormal traceMode = iota
	traceGo
	traceGoGap // between goroutines: a blank line was read
	tracePython
	traceFrames // JavaScript or JVM frames
	traceRust
	traceASan
	traceShadow
	traceRace // a Go race report, up to its closing rule
)

func (t *traceStage) line(l []byte, off int) {
	switch t.mode {
	case traceGo, traceGoGap:
		if t.goLine(l, off) {
			return
		}
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
	case traceFrames:
		if t.re.Match(l) {
			t.hold(l, off, jsLibFrameRE.Match(l))
			return
		}
	case traceRust:
		switch {
		case rustFrameRE.Match(l):
			t.hold(l, off, rustLibRE.Match(l))
			return
		case rustAtRE.Match(l) && len(t.frames) > 0:
			f := &t.frames[len(t.frames)-1]
			f.add(l)
			f.lib = f.lib || bytes.Contains(l, []byte("/rustc/")) || bytes.Contains(l, []byte("/.cargo/registry/"))
			return
		case rustAtRE.Match(l):
			return
		}
	case traceASan:
		if asanFrameRE.Match(l) {
			t.hold(l, off, asanLibRE.Match(l))
			return
		}
	case traceRace:
		switch {
		case raceFuncRE.Match(l):
			t.hold(l, off, false)
			return
		case raceFileRE.Match(l) && len(t.frames) > 0:
			t.frames[len(t.frames)-1].add(l)
			return
		case bytes.HasPrefix(l, []byte("=====")):
			t.raceSection()
			if t.skipped > 0 {
				t.scratch = fmt.Appendf(t.scratch[:0], "… %d standard library frames omitted …", t.skipped)
				t.next.line(t.scratch, off)
			}
			t.next.line(l, off)
			t.mode = traceNormal
			return
		case len(l) == 0 || l[0] != ' ':
			t.raceSection()
			t.next.line(l, off)
			return
		}
	case traceShadow:
		if len(l) == 0 || l[0] == ' ' || bytes.HasPrefix(l, []byte("=>")) || bytes.HasPrefix(l, []byte("Shadow byte legend")) {
			t.skipped++
			return
		}
	}
	t.endMode(off)
	t.normal(l, off)
}

func (t *traceStage) normal(l []byte, off int) {
	switch {
	case isGoroutineHeader(l):
		t.mode, t.goroutines, t.goShown, t.goOmitted, t.goSeen = traceGo, 0, 0, 0, nil
		t.goStart(l, off)
	case bytes.Contains(l, []byte("Traceback (")) && pyTraceRE.Match(l):
		t.next.line(l, off)
		t.mode, t.pyN, t.pyFirst, t.pyLast, t.pyCur = tracePython, 0, nil, nil, nil
	case bytes.Equal(bytes.TrimSpace(l), []byte("stack backtrace:")):
		t.next.line(l, off)
		t.startFrames(traceRust, keepRustFrames, nil)
	case bytes.Equal(l, []byte("WARNING: DATA RACE")):
		t.next.line(l, off)
		t.startFrames(traceRace, keepGoFrames, nil)
		t.skipped = 0
	case bytes.HasPrefix(l, []byte("Shadow bytes around the buggy address")):
		t.mode, t.skipped = traceShadow, 1
	case bytes.IndexByte(l, '#') >= 0 && asanFrameRE.Match(l):
		t.startFrames(traceASan, keepASanFrames, nil)
		t.hold(l, off, asanLibRE.Match(l))
	case isFrameStart(l) && (jvmFrameRE.Match(l) || jsFrameRE.Match(l)):
		if jvmFrameRE.Match(l) {
			t.startFrames(traceFrames, keepJVMFrames, jvmFrameRE)
		} else {
			t.startFrames(traceFrames, keepJSFrames, jsFrameRE)
		}
		t.hold(l, off, false) // the first frame is where it was thrown: always shown
	default:
		t.next.line(l, off)
	}
}

func (t *traceStage) startFrames(m traceMode, keep int, re *lazyRegexp) {
	t.mode, t.keep, t.re, t.nframes = m, keep, re, 0
	t.frames = t.frames[:0]
}

// hold adds a frame to those held (or counts it, past maxHeldFrames), reusing the buffers of
// earlier traces. lib says it is not the program's own code.
func (t *traceStage) hold(l []byte, off int, lib bool) {
	t.nframes++
	if len(t.frames) >= maxHeldFrames {
		return
	}
	if len(t.frames) < cap(t.frames) {
		t.frames = t.frames[:len(t.frames)+1]
	} else {
		t.frames = append(t.frames, frame{})
	}
	f := &t.frames[len(t.frames)-1]
	f.lines[0], f.lines[1] = f.lines[0][:0], f.lines[1][:0]
	f.n, f.off, f.lib = 0, off, lib
	f.add(l)
}

// emitFrames shows the held frames: all of them when whole is set and there is at most one more
// than keep; otherwise the first one (if first is set) and the program's own ones up to keep (the
// top library ones if it has none of its own), with a line counting the others.
func (t *traceStage) emitFrames(keep int, first, whole bool) {
	n := t.nframes
	if n == 0 {
		return
	}
	show := make([]bool, len(t.frames))
	if whole && n <= keep+1 {
		for i := range show {
			show[i] = true
		}
	} else {
		shown := 0
		if first {
			show[0], shown = true, 1
		}
		for i := range t.frames {
			if shown < keep && !show[i] && !t.frames[i].lib {
				show[i] = true
				shown++
			}
		}
		if shown == 0 {
			for i := 0; i < len(t.frames) && shown < min(keep, libFramesInFirst); i++ {
				show[i] = true
				shown++
			}
		}
	}
	kept := 0
	for i, f := range t.frames {
		if !show[i] {
			continue
		}
		kept++
		for j := 0; j < f.n; j++ {
			t.next.line(f.lines[j], f.off)
		}
	}
	if n > kept {
		t.scratch = fmt.Appendf(t.scratch[:0], "… %d frames omitted …", n-kept)
		t.next.line(t.scratch, t.frames[0].off)
	}
}

// ---- Go ----

// goLine reads a line inside a goroutine dump; it returns false when the dump has ended.
func (t *traceStage) goLine(l []byte, off int) bool {
	switch {
	case isGoroutineHeader(l):
		t.goFinish()
		t.goStart(l, off)
		return true
	case len(l) == 0:
		if t.mode == traceGo {
			t.goFinish()
			t.mode = traceGoGap
		}
		return true
	case t.mode == traceGoGap:
		return false
	case goFileRE.Match(l) && t.goPending:
		t.frames[len(t.frames)-1].add(l)
		t.goPending = false
		return true
	case goFileRE.Match(l):
		return true // a location of a frame that was only counted
	case isGoFuncLine(l):
		t.hold(l, off, false)
		t.goPending = len(t.frames) > 0 && t.frames[len(t.frames)-1].n == 1 && t.nframes <= maxHeldFrames
		return true
	}
	return false
}

func (t *traceStage) goStart(l []byte, off int) {
	t.goroutines++
	t.goHeader, t.goHeaderOff = append(t.goHeader[:0], l...), off
	t.frames, t.nframes, t.goPending = t.frames[:0], 0, false
	t.mode = traceGo
}

// goFinish shows or counts the goroutine just read.
func (t *traceStage) goFinish() {
	if t.goHeader == nil {
		return
	}
	own := 0
	for i := range t.frames {
		f := &t.frames[i]
		t.learnGoroot(f)
		f.lib = t.goLib(f)
	}
	for _, f := range t.frames {
		if !f.lib {
			own++
		}
	}
	// Goroutines parked in the same code (a pool of workers) are shown once.
	sig := t.goSignature()
	if t.goroutines == 1 || own > 0 && t.goShown < keepGoRoutines && !t.goSeen[sig] {
		if t.goSeen == nil {
			t.goSeen = map[string]bool{}
		}
		t.goSeen[sig] = true
		t.goShown++
		t.next.line(t.goHeader, t.goHeaderOff)
		t.emitFrames(keepGoFrames, false, false)
	} else {
		t.goOmitted++
	}
	t.goHeader = nil
}

// goSignature identifies the code a goroutine runs: its frames without arguments and offsets.
func (t *traceStage) goSignature() string {
	var b []byte
	for _, f := range t.frames {
		fn := f.lines[0]
		if i := bytes.LastIndexByte(fn, '('); i > 0 && fn[len(fn)-1] == ')' {
			fn = fn[:i]
		}
		b = append(append(b, fn...), '\n')
		if f.n == 2 {
			file := f.lines[1]
			if i := bytes.LastIndex(file, []byte(" +0x")); i > 0 {
				file = file[:i]
			}
			b = append(append(b, file...), '\n')
		}
	}
	return string(b)
}

// learnGoroot finds the source root of the standard library from a frame of a runtime or
// testing function ("/usr/local/go/src/").
func (t *traceStage) learnGoroot(f *frame) {
	if t.goroot != "" || f.n < 2 {
		return
	}
	fn, file := f.lines[0], f.lines[1]
	for _, p := range []string{"runtime", "testing"} {
		if bytes.HasPrefix(fn, []byte(p+".")) {
			if i := bytes.Index(file, []byte("/src/"+p+"/")); i > 0 {
				t.goroot = string(bytes.TrimLeft(file[:i+len("/src/")], " \t"))
			}
		}
	}
}

// goLib reports whether a Go frame is of the standard library or the test harness: its file is
// under the standard library's root, or (when that root is not known) its package path does not
// start with a domain, as module paths do ("example.com/x").
func (t *traceStage) goLib(f *frame) bool {
	if f.n == 2 {
		file := bytes.TrimLeft(f.lines[1], " \t")
		if bytes.Contains(file, []byte("_testmain.go:")) {
			return true
		}
		if t.goroot != "" {
			return bytes.HasPrefix(file, []byte(t.goroot))
		}
	}
	fn := bytes.TrimPrefix(f.lines[0], []byte("created by "))
	if bytes.HasPrefix(fn, []byte("main.")) {
		return false
	}
	slash := bytes.IndexByte(fn, '/')
	return slash < 0 || bytes.IndexByte(fn[:slash], '.') < 0
}

// raceSection shows the frames of one access or goroutine of a race report that are the
// program's own (the first one if none is) and counts the others.
func (t *traceStage) raceSection() {
	shown := 0
	for i := range t.frames {
		t.learnGoroot(&t.frames[i])
	}
	for i := range t.frames {
		f := &t.frames[i]
		if t.goLib(f) && !(shown == 0 && i == len(t.frames)-1) {
			t.skipped++
			continue
		}
		shown++
		for j := 0; j < f.n; j++ {
			t.next.line(f.lines[j], f.off)
		}
	}
	t.skipped += t.nframes - len(t.frames)
	t.frames, t.nframes = t.frames[:0], 0
}

// ---- Python ----

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
	case traceGo, traceGoGap:
		t.goFinish()
		if t.goOmitted > 0 {
			emit("… %d more goroutines omitted …", t.goOmitted)
		}
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
		t.emitFrames(t.keep, true, true)
	case traceASan:
		t.emitFrames(t.keep, true, false)
	case traceRust:
		t.emitFrames(t.keep, false, false)
	case traceShadow:
		emit("… %d lines of shadow memory omitted …", t.skipped)
	case traceRace:
		t.raceSection()
	}
	t.mode = traceNormal
}

func (t *traceStage) end() {
	t.endMode(math.MaxInt)
	t.next.end()
}
