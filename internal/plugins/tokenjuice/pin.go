package tokenjuice

import (
	"bytes"
)

// Pinned lines are the ones a compacted failure must never lose, whatever the budgets: the values
// of a failed assertion (got and want, left and right, an assertion's diff), exit statuses, panic
// and exception headers, the names of failed tests and the runners' summaries. A sample that
// drops them reads as a different failure, or as none. They are recognised by their shape, not by
// the tool that printed them, so that a runner the rules have never seen keeps them too.

// pinBudget bounds the characters of pinned lines kept whole. Past it, pinned lines compete with
// the other salient lines for their budget and the gap lines say how many were left out.
const pinBudget = 6000

var (
	// exitRE: an exit status, however a tool words it.
	exitRE = lazyRE(`(?i)\bexit(ed)?( with)? (status|code)\b[: ]*-?\d+|^exit \d+$|returned -?\d+ exit status|\] Error -?\d+$|^make(\[\d+\])?: \*\*\* |process finished with exit code|exited with code -?\d+|\bELIFECYCLE\b|command failed with exit code`)
	// failHeadREs are the shapes of failHead that are not prefixes, in small regexps (each is run
	// by RE2's backtracker, which a large alternation is not, and allocates nothing).
	failHeadREs = []*lazyRegexp{
		lazyRE(`^\d+\) \S|^\d+ (passing|failing|pending)\b|^Tests?:\s+\d`),
		lazyRE(`^---- \S+ stdout ----$|^test \S+ \.\.\. FAILED$|^==\d+==ERROR: `),
		lazyRE(`^\S+Error(\s*\[\w+\])?: |^\S+Exception: |^\S*ExceptionGroup: |^[\w.]+Error$`),
	}
	// assertHeadRE opens an assertion block: the lines after it carry its values.
	assertHeadRE = lazyRE(`AssertionError|[Aa]ssertion\b.*\bfailed|[Aa]ssertion failed|Expected values to be|\+ actual - expected|\+ expected - actual|Lists differ|Tuples differ|Dicts differ|Sets differ|First differing element|expect\(.*\)\.|Error Trace:|Error:\s+Not equal|Difference:`)
	// valueRE: a line that states a value an assertion compared, in the forms runners print.
	valueRE = lazyRE(`(?i)^\s*(left|right|expected|actual|received|got|want|wanted|value|operator|diff)\s*[:=]|^\s*[-+]\s|^\s*[-+]$|^\s*\?\s|!==|!=|\bwant(ed)?\b.*\bgot\b|\bgot\b.*\bwant(ed)?\b|=.*,\s*want\s|\bexpected\b.*\b(but|got|received|actual|instead)\b|\bto (be|equal)\b`)
	// valueOnlyRE are value lines recognised outside any block: Go's "got X, want Y" and Rust's
	// "left:"/"right:".
	valueOnlyRE = lazyRE(`^\s*(left|right):\s|\S\s=\s.*,\s*want\s|\bgot\b.*\bwant(ed)?\b|\bwant(ed)?\b.*\bgot\b`)
	// blockEndRE ends an assertion block: a stack frame or the next test.
	blockEndRE = lazyRE(`^\s+at |^\s*File "|^Traceback |^stack backtrace:|^\s*\d+: |^\s*(✔|✓|√|ok \d+|PASS|--- PASS)|^={5,}|^-{5,}$`)
)

// assertBlockLines bounds the lines read as an assertion block's values after its header.
const assertBlockLines = 40

// pinner tells pinned lines. It keeps state (whether the line is in an assertion block), so it
// must see every line of an output once, in order.
type pinner struct {
	block int  // lines left in the current assertion block
	next  bool // the next line is a panic's message
}

func (p *pinner) pin(l []byte) bool {
	t := bytes.TrimSpace(l)
	if len(t) == 0 {
		return false
	}
	// Python draws an exception group's tracebacks in boxes ("  | KeyError: 'x'"): what is in a
	// box is read as if it were not.
	if t[0] == '|' {
		l = bytes.TrimLeft(t[1:], " ")
		t = l
		if len(t) == 0 {
			return false
		}
		if pyFrameRE.Match(append([]byte("  "), l...)) {
			return true // the frames of a sub-exception: no trace stage shortened them
		}
	}
	if p.next {
		p.next = false
		return true
	}
	if bytes.Contains(l, []byte("panicked at ")) {
		p.next = bytes.HasSuffix(t, []byte(":")) // Rust prints the message on the next line
		return true
	}
	if mayAssert(l) && assertHeadRE.Match(l) {
		p.block = assertBlockLines
		return true
	}
	if p.block > 0 {
		if blockEndRE.Match(l) {
			p.block = 0
		} else {
			p.block--
			if valueRE.Match(l) {
				return true
			}
		}
	}
	return mayExit(l) && exitRE.Match(l) || failHead(t) || mayValue(l) && valueOnlyRE.Match(l)
}

// failHeadPrefixes start the lines that name a failure or a test that failed, and the runners'
// summaries.
var failHeadPrefixes = [][]byte{[]byte("panic: "), []byte("fatal error: "), []byte("thread '"), []byte("Exception in thread "),
	[]byte("Caused by: "), []byte("--- FAIL: "), []byte("FAIL"), []byte("ERROR:"), []byte("not ok "), []byte("✖ "),
	[]byte("test result: "), []byte("Ran "), []byte("OK ("), []byte("ℹ tests "), []byte("ℹ pass "), []byte("ℹ fail "),
	[]byte("# tests "), []byte("# pass "), []byte("# fail "), []byte("Test Suites:"), []byte("SUMMARY: "),
	[]byte("WARNING: DATA RACE"), []byte("Read at 0x"), []byte("Write at 0x"), []byte("Previous read at 0x"),
	[]byte("Previous write at 0x"), []byte("Goroutine ")}

// failHead reports whether t, a line without its leading blanks, names a failure: a panic, an
// exception, a failed test, a runner's summary, a race's accesses.
func failHead(t []byte) bool {
	for _, p := range failHeadPrefixes {
		if bytes.HasPrefix(t, p) {
			return true
		}
	}
	if len(t) == 0 || t[0] != '-' && t[0] != '=' && t[0] != 't' && t[0] != 'T' && (t[0] < '0' || t[0] > '9') &&
		!bytes.Contains(t, []byte("Error")) && !bytes.Contains(t, []byte("Exception")) {
		return false
	}
	for _, re := range failHeadREs {
		if re.Match(t) {
			return true
		}
	}
	return false
}

// mayExit, mayAssert and mayValue are cheap tests before the regexps, which every line of a log
// would otherwise go through.
func mayExit(l []byte) bool {
	return containsFold(l, "exit") || bytes.Contains(l, []byte("Error ")) || bytes.Contains(l, []byte("make")) ||
		bytes.Contains(l, []byte("ELIFECYCLE")) || bytes.Contains(l, []byte("returned")) || bytes.Contains(l, []byte("command failed"))
}

func mayAssert(l []byte) bool {
	for _, w := range assertWords {
		if bytes.Contains(l, w) {
			return true
		}
	}
	return false
}

var assertWords = [][]byte{[]byte("ssert"), []byte("xpected"), []byte("actual"), []byte("differ"), []byte("expect("),
	[]byte("Error Trace"), []byte("Not equal"), []byte("Difference"), []byte("Lists"), []byte("Dicts"), []byte("Tuples"), []byte("Sets")}

func mayValue(l []byte) bool {
	return bytes.Contains(l, []byte("want")) || bytes.Contains(l, []byte("left:")) || bytes.Contains(l, []byte("right:"))
}

// containsFold reports whether l contains the lower-case ASCII word w in any case.
func containsFold(l []byte, w string) bool {
	for i := 0; i+len(w) <= len(l); i++ {
		j := 0
		for j < len(w) && l[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}
