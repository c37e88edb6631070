package tokenjuice

import (
	"fmt"
	"regexp"
	"strings"
)

// Budgets, in characters, of the parts of a compacted text.
const (
	sampleBudget  = 600  // head, middle window and tail of ordinary lines
	salientBudget = 1600 // lines that explain a failure: errors, warnings, locations
	maxLineChars  = 400  // longer lines are cut in the middle
)

var genericRule = &rule{id: "generic", family: "generic", match: func(*command, *simple) bool { return true }, reduce: reduceGeneric}

// salientRE finds lines that explain a failure: error words and file:line locations.
var salientRE = regexp.MustCompile(`(?i)\b(error|errors|err|fail|failed|failure|failures|fatal|panic|panicked|exception|traceback|assert\w*|warning|denied|refused|not found|no such|cannot|can't|unable|undefined|invalid|missing|timed? ?out|killed|segmentation|unhandled|abort\w*)\b|\w\.[A-Za-z]{1,6}:\d+`)

func reduceGeneric(d *doc) (string, bool) {
	lines := condense(d.lines)
	return strings.Join(selectLines(lines, sampleBudget, isSalient, salientBudget), "\n"), true
}

// salientWords are the stems salientRE looks for, lower case; a line without any of them (and
// without a file:line location) cannot match, and most lines of a big log have none.
var salientWords = []string{"err", "fail", "fatal", "panic", "exception", "traceback", "assert", "warn",
	"denied", "refused", "not found", "no such", "cannot", "can't", "unable", "undefined", "invalid",
	"missing", "time", "killed", "segmentation", "unhandled", "abort"}

// isSalient is salientRE.MatchString with a cheap prefilter.
func isSalient(l string) bool {
	var buf [512]byte
	if len(l) > len(buf) {
		return salientRE.MatchString(l)
	}
	low := buf[:len(l)]
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	ls := string(low) // one small allocation; Contains on it is fast
	for _, w := range salientWords {
		if strings.Contains(ls, w) {
			return salientRE.MatchString(l)
		}
	}
	return hasLocation(l) && salientRE.MatchString(l)
}

// hasLocation reports whether l may hold a file:line location: ".ext:" and a digit, with a letter
// extension of 1 to 6 characters.
func hasLocation(l string) bool {
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

// condense applies the transforms every family shares: long lines are cut in the middle, stack
// traces are shortened, and runs of repeated or similar lines collapse to one.
func condense(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = clip(l, maxLineChars)
	}
	out = condenseTraces(out)
	return collapseRuns(out)
}

// selectLines keeps every line when they fit the budget; otherwise the salient lines (up to their
// own budget, sampled if there are more) and a sample of the rest, in order, with gap lines.
func selectLines(lines []string, budget int, salient func(string) bool, salBudget int) []string {
	if linesChars(lines) <= budget+salBudget/2 {
		return lines
	}
	keep := sampleKeep(lines, budget)
	if salient != nil {
		var idx []int
		var sal []string
		for i, l := range lines {
			if !keep[i] && salient(l) {
				idx = append(idx, i)
				sal = append(sal, l)
			}
		}
		sk := sampleKeep(sal, salBudget)
		for j, k := range sk {
			if k {
				keep[idx[j]] = true
			}
		}
	}
	return render(lines, keep, "lines")
}

// sample keeps a head, a middle window and a tail of items within budget; see sampleKeep.
func sample(items []string, budget int, unit string) []string {
	return render(items, sampleKeep(items, budget), unit)
}

// render returns the kept items in order with a gap line for each run of left-out ones.
func render(items []string, keep []bool, unit string) []string {
	out := make([]string, 0, len(items))
	skipped := 0
	for i, it := range items {
		if !keep[i] {
			skipped++
			continue
		}
		if skipped > 0 {
			out = append(out, gapLine(skipped, unit))
			skipped = 0
		}
		out = append(out, it)
	}
	if skipped > 0 {
		out = append(out, gapLine(skipped, unit))
	}
	return out
}

// collapseRuns collapses runs of identical lines to one line with a count, and runs of three or
// more lines that differ only in numbers and hex ids (timestamps, counters, addresses) to the first
// of them and a gap line; a run that ends the output keeps its last line too (a final state).
func collapseRuns(lines []string) []string {
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); {
		j := i + 1
		for j < len(lines) && lines[j] == lines[i] {
			j++
		}
		if n := j - i; n > 1 && lines[i] != "" {
			out = append(out, fmt.Sprintf("%s  (×%d)", lines[i], n))
			i = j
			continue
		}
		j = i + 1
		for j < len(lines) && lines[i] != "" && similar(lines[j], lines[i]) {
			j++
		}
		if n := j - i; n >= 3 {
			if j == len(lines) {
				out = append(out, lines[i], fmt.Sprintf("… %d similar lines omitted …", n-2), lines[j-1])
			} else {
				out = append(out, lines[i], fmt.Sprintf("… %d similar lines omitted …", n-1))
			}
			i = j
			continue
		}
		out = append(out, lines[i])
		i++
	}
	return out
}

// similar reports whether a and b are equal once every run of digits, and every run of seven or
// more hex digits, counts as the same token. It allocates nothing: on a 50 MB log it runs once per
// line, where a regexp replacement dominated the whole compaction.
func similar(a, b string) bool {
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
func varRun(s string, i int) int {
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
func isFrameStart(l string) bool {
	t := strings.TrimLeft(l, " \t")
	return len(t) < len(l) && (strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "... "))
}

// condenseTraces shortens stack traces: a Go panic keeps its message and the first goroutine's top
// frames and counts the other goroutines; a Python traceback keeps its outermost and innermost
// frames and the exception; JVM and JavaScript traces keep their top frames.
func condenseTraces(lines []string) []string {
	out := make([]string, 0, len(lines))
	goroutines := 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "goroutine ") && goroutineRE.MatchString(l):
			goroutines++
			j := i + 1
			for j < len(lines) && lines[j] != "" && !goroutineRE.MatchString(lines[j]) {
				j++
			}
			if goroutines == 1 {
				frames := lines[i+1 : j]
				out = append(out, l)
				if len(frames) > 2*keepGoFrames {
					out = append(out, frames[:2*keepGoFrames]...)
					out = append(out, fmt.Sprintf("… %d frame lines omitted …", len(frames)-2*keepGoFrames))
				} else {
					out = append(out, frames...)
				}
			} else {
				// Later goroutines: counted in one line after the run of them.
				k := j
				for k < len(lines) && (lines[k] == "" || goroutineRE.MatchString(lines[k])) {
					if goroutineRE.MatchString(lines[k]) {
						for k+1 < len(lines) && lines[k+1] != "" && !goroutineRE.MatchString(lines[k+1]) {
							k++
						}
						goroutines++
					}
					k++
				}
				out = append(out, fmt.Sprintf("… %d more goroutines omitted …", goroutines-1))
				j = k
			}
			i = j - 1
		case strings.Contains(l, "Traceback (") && pyTraceRE.MatchString(l):
			out = append(out, l)
			var frames [][]string
			j := i + 1
			for j < len(lines) && pyFrameRE.MatchString(lines[j]) {
				f := []string{lines[j]}
				j++
				for j < len(lines) && strings.HasPrefix(lines[j], "    ") && !pyFrameRE.MatchString(lines[j]) {
					f = append(f, lines[j])
					j++
				}
				frames = append(frames, f)
			}
			if len(frames) > keepPyFrames+1 {
				out = append(out, frames[0]...)
				out = append(out, fmt.Sprintf("… %d frames omitted …", len(frames)-keepPyFrames-1))
				for _, f := range frames[len(frames)-keepPyFrames:] {
					out = append(out, f...)
				}
			} else {
				for _, f := range frames {
					out = append(out, f...)
				}
			}
			i = j - 1
		case isFrameStart(l) && (jvmFrameRE.MatchString(l) || jsFrameRE.MatchString(l)):
			keep := keepJSFrames
			re := jsFrameRE
			if jvmFrameRE.MatchString(l) {
				keep, re = keepJVMFrames, jvmFrameRE
			}
			j := i
			for j < len(lines) && re.MatchString(lines[j]) {
				j++
			}
			if n := j - i; n > keep+1 {
				out = append(out, lines[i:i+keep]...)
				out = append(out, fmt.Sprintf("… %d frames omitted …", n-keep))
			} else {
				out = append(out, lines[i:j]...)
			}
			i = j - 1
		default:
			out = append(out, l)
		}
	}
	return out
}
