package tokenjuice

import (
	"bytes"
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
var salientRE = lazyRE(`(?i)\b(error|errors|err|fail|failed|failure|failures|fatal|panic|panicked|exception|traceback|assert\w*|warning|denied|refused|not found|no such|cannot|can't|unable|undefined|invalid|missing|timed? ?out|killed|segmentation|unhandled|abort\w*)\b|\w\.[A-Za-z]{1,6}:\d+`)

func reduceGeneric(d *doc) (string, bool) {
	sel := newSelector(len(d.raw)/2, sampleBudget, isSalient, salientBudget, "lines").pinning()
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
			if (a[i] != b[j] || isZeros(a[i:i+ra]) != isZeros(b[j:j+rb])) && statusNumber(a, i, ra) {
				// "exit 1" among "exit 0", "status 500" among "status 200", "1 errors" among
				// "0 errors": a run that said them once would read as all passing.
				return false
			}
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

func isZeros[T text](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

// statusNumber reports whether the number s[i:i+n] says how something ended: it follows a word
// such as exit, status, code or rc ("exit status 1", "rc=1", "returned 2"), or a count such as
// errors or failures ("failures=4", "errors: 3"), or precedes one ("3 errors", "1 failed").
func statusNumber[T text](s T, i, n int) bool {
	k := i
	for k > 0 && (s[k-1] == ' ' || s[k-1] == ':' || s[k-1] == '=') {
		k--
	}
	start := k
	for start > 0 && isWordByte(s[start-1]) {
		start--
	}
	if k > start && statusBefore[strings.ToLower(string(s[start:k]))] {
		return true
	}
	k = i + n
	for k < len(s) && s[k] == ' ' {
		k++
	}
	end := k
	for end < len(s) && isWordByte(s[end]) {
		end++
	}
	return end > k && k > i+n && statusAfter[strings.ToLower(string(s[k:end]))]
}

func isWordByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// The words around a number that make it a status (see statusNumber).
var (
	statusBefore = map[string]bool{"exit": true, "exited": true, "status": true, "code": true, "rc": true,
		"returned": true, "return": true, "ret": true, "result": true, "errno": true, "exit_code": true, "exitcode": true,
		"error": true, "errors": true, "failure": true, "failures": true, "failed": true, "fail": true, "failing": true,
		"warning": true, "warnings": true}
	statusAfter = map[string]bool{"error": true, "errors": true, "failure": true, "failures": true, "failed": true,
		"fail": true, "failing": true, "warning": true, "warnings": true}
)

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
