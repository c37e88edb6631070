package tokenjuice

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

var (
	goOkRE     = lazyRE(`^ok\s+(\S+)\s+(\(cached\)|[\d.]+s)`)
	goNoTestRE = lazyRE(`^\?\s+\S+\s+\[no test files\]$`)
	goPassRE   = lazyRE(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|SKIP):)\s`)
)

// goNoRunNote ends the ok line of a package where the -run pattern matched no test.
const goNoRunNote = "[no tests to run]"

// reduceGoTest keeps failures (--- FAIL blocks with their messages, panics, build errors, FAIL
// lines) ahead of other lines, within a budget of their own, and reduces passing packages to a count
// and a sample of their names.
func reduceGoTest(d *doc) (string, bool) {
	var ok, rest []string
	cached, noTests, noRun := 0, 0, 0
	lines := d.lines
	if events := decodeTestEvents(lines, hasJSONFlag(d.src)); events != nil {
		lines = events
	}
	for _, l := range lines {
		switch {
		case goOkRE.MatchString(l):
			m := goOkRE.FindStringSubmatch(l)
			name := m[1]
			if strings.HasSuffix(l, goNoRunNote) {
				// The -run pattern matched no test there: "ok" alone would read as tests that
				// passed.
				name += " " + goNoRunNote
				noRun++
			}
			ok = append(ok, name)
			if m[2] == "(cached)" {
				cached++
			}
		case goNoTestRE.MatchString(l):
			noTests++
		case goPassRE.MatchString(l), l == "PASS":
		default:
			rest = append(rest, l)
		}
	}
	var out []string
	if len(ok) > 0 {
		summary := fmt.Sprintf("ok: %s", plural(len(ok), "package"))
		if cached > 0 {
			summary += fmt.Sprintf(" (%d cached)", cached)
		}
		if noRun > 0 {
			summary += fmt.Sprintf("; %d %s", noRun, goNoRunNote)
		}
		if noTests > 0 {
			summary += fmt.Sprintf("; %d without tests", noTests)
		}
		out = append(out, summary)
		out = append(out, sample(ok, sampleBudget/2, "packages")...)
	}
	if len(rest) > 0 {
		out = append(out, selectFailure(rest, sampleBudget, testSalient, salientBudget*2)...)
	}
	if len(out) == 0 {
		return "", false
	}
	return strings.Join(out, "\n"), true
}

// testEvent is one line of go test -json (test2json's events) or go build -json.
type testEvent struct {
	Action, Output string
	// FailedBuild is set on a package's fail event when the package failed because a build did:
	// the ImportPath of the build-fail event that reported it (Go 1.24+).
	FailedBuild string
	// ImportPath names the package of build-output and build-fail events (Go 1.24+), which carry no
	// Time or Package: a stream can begin with them.
	ImportPath string
}

// decodeTestEvents turns the event stream of go test -json or go build -json into the text go
// prints without -json: the Output of each event in order, build errors (build-output events)
// included. Lines that are not events are what go wrote to stderr beside the stream (build errors
// before Go 1.24 or with GODEBUG=gotestjsonbuildtext=1, "go: downloading …"); they are kept as
// they are. A build-fail event that no package's fail event reports (go build -json, a stream cut
// short) ends the text as go test says it, "FAIL\t<pkg> [build failed]", so that the failure is
// never only implied. It returns nil when no line is an event, or unless most lines are events
// when the command did not ask for them (a test of plain go test may print a JSON line of its own).
func decodeTestEvents(lines []string, asked bool) []string {
	events, other := 0, 0
	for _, l := range lines {
		switch {
		case maybeTestEvent(l):
			events++
		case strings.TrimSpace(l) != "":
			other++
		}
	}
	if events == 0 || !asked && events <= other {
		return nil
	}
	var text strings.Builder
	var buildFailed []string
	seen, reported := map[string]bool{}, map[string]bool{}
	for _, l := range lines {
		if maybeTestEvent(l) && !strings.Contains(l, `"Output":`) && !strings.Contains(l, `"build-fail"`) && !strings.Contains(l, `"FailedBuild":`) {
			continue // run, pass, pause…: an event that says nothing go would print
		}
		var ev testEvent
		if !maybeTestEvent(l) || json.Unmarshal([]byte(l), &ev) != nil || ev.Action == "" {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if text.Len() > 0 && !strings.HasSuffix(text.String(), "\n") {
				text.WriteByte('\n') // an event's output ended mid-line
			}
			text.WriteString(l)
			text.WriteByte('\n')
			continue
		}
		text.WriteString(ev.Output)
		switch {
		case ev.Action == "build-fail" && ev.ImportPath != "" && !seen[ev.ImportPath]:
			buildFailed = append(buildFailed, ev.ImportPath)
			seen[ev.ImportPath] = true
		case ev.FailedBuild != "":
			reported[ev.FailedBuild] = true
		}
	}
	for _, p := range buildFailed {
		if !reported[p] {
			if text.Len() > 0 && !strings.HasSuffix(text.String(), "\n") {
				text.WriteByte('\n')
			}
			fmt.Fprintf(&text, "FAIL\t%s [build failed]\n", p)
		}
	}
	return normalize([]byte(text.String()))
}

// hasJSONFlag says whether a go command asked for its JSON event stream.
func hasJSONFlag(s *simple) bool {
	return s != nil && s.has("-json", "--json", "-json=true", "--json=true")
}

// startsGoEvents says whether an output begins like go's JSON event streams (go build -json
// begins with build-output events, go test -json with them or with test2json's).
func startsGoEvents(b []byte) bool {
	first, _, _ := strings.Cut(strings.TrimLeft(string(b[:min(len(b), 256)]), " \t\r\n"), "\n")
	return strings.HasPrefix(first, `{"ImportPath":`) || strings.HasPrefix(first, `{"Time":`) || strings.HasPrefix(first, `{"Action":`)
}

// maybeTestEvent is a cheap test for a line of go's JSON event streams.
func maybeTestEvent(l string) bool {
	return strings.HasPrefix(l, "{\"") && strings.Contains(l, `"Action":`)
}

var (
	testSalientRE = lazyRE(`(?i)(\bfail|\berror|\bpanic|assert|expected|received|\bwant\b|\bgot\b|exception|traceback|^\s*E\s|^>\s|●|✕|×|\bFAILED\b|\bERROR\b|^-{2,} |\w\.\w{1,6}:\d+|\(\d+,\d+\)|test result:|^\s+\d+: [\w<]|^\s*File ".*", line \d+|^\s*(created by )?[\w.-]+/[\w.\-/]+\.\S+\(|^stack backtrace:|^\s*(Tests?|Test Suites|Test Files|Snapshots|Duration|Time):|passed|failed|^=+ .* =+$)`)
	// testNoiseRE are lines of passing tests and runner chatter.
	testNoiseRE = lazyRE(`^\s*$|^(_ )+_?$|^=+ test session starts =+$|^\s*(✓|√|✔|PASS\s|ok\s|test .* \.\.\. ok$|\S+::\S+ PASSED|platform |rootdir:|plugins:|cachedir:|configfile:|collecting|collected \d+ items?$|Compiling |Finished |Running |Downloaded |Downloading |Fresh |Blocking )`)
	// runnerNoiseRE is more chatter: Rust's backtrace notes, the bookkeeping fields of Node's
	// assertion errors, unittest's passing tests. Kept apart from testNoiseRE, whose size decides
	// which of RE2's engines runs it on every line.
	runnerNoiseRE = lazyRE(`^\s*(note: Some details are omitted|note: run with .RUST_BACKTRACE|generatedMessage: (true|false),|code: 'ERR_\w+',|operator: '\w+'|ℹ (cancelled|skipped|todo) 0$|\w+ \([\w.]+\) \.\.\. ok$)`)
	// ruleRE finds the long rules runners draw around headings ("==== FAILURES ====").
	ruleRE       = lazyRE(`={4,}|_{4,}|-{8,}|\*{4,}|#{8,}|~{8,}`)
	pytestDotsRE = lazyRE(`^(\S+\.py)? ?[.sxX]+\s*(\[\s*\d+%\])?$`)
)

func testSalient(l []byte) bool { return testSalientRE.Match(l) }

// hasRule is a cheap test for what ruleRE finds: four of the same rule character in a row.
func hasRule(l string) bool {
	run := 0
	for i := 1; i < len(l); i++ {
		if l[i] == l[i-1] && strings.IndexByte("=_-*#~", l[i]) >= 0 {
			if run++; run >= 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// reduceTests serves pytest, jest, vitest, cargo test, mocha and npm test: passing tests and
// runner chatter go, failures (names, assertion messages, locations) and summaries stay.
func reduceTests(d *doc) (string, bool) {
	var kept []string
	dropped := 0
	lines := d.lines
	if slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "TAP version ") }) {
		lines = tapFilter(lines)
	}
	for _, l := range lines {
		if isTestNoise(l) || isRunnerNoise(l) || !strings.ContainsAny(l, "FE") && isPytestDots(strings.TrimSpace(l)) {
			dropped++
			continue
		}
		if hasRule(l) {
			if strings.Trim(l, "=_-*#~ ") == "" {
				dropped++ // a rule alone separates what the kept lines show apart anyway
				continue
			}
			l = ruleRE.ReplaceAllStringFunc(l, func(r string) string { return r[:3] })
		}
		kept = append(kept, l)
	}
	if len(kept) == 0 {
		return fmt.Sprintf("%s of passing tests and runner output omitted", plural(dropped, "line")), true
	}
	return strings.Join(selectFailure(kept, sampleBudget, testSalient, salientBudget*2), "\n"), true
}

var (
	tapOkRE    = lazyRE(`^\s*ok \d+ `)
	tapNotOkRE = lazyRE(`^\s*not ok \d+ `)
	tapNoiseRE = lazyRE(`^\s*(TAP version \d+|# Subtest: |\d+\.\.\d+$|---$|\.\.\.$|duration_ms: |type: 'suite'|failureType: |code: '|name: '|operator: |error: '\d+ subtests? failed'|# (cancelled|skipped|todo) 0$)`)
)

// tapFilter drops what a TAP stream says about passing tests (their "ok" line and YAML block)
// and the bookkeeping of failing ones, keeping each "not ok" line with its error, values,
// location and first stack frame, and the summary.
func tapFilter(lines []string) []string {
	out := lines[:0:0]
	skipIndent := -1 // inside a block being dropped: lines indented deeper than this
	stack := -1      // inside a stack: lines indented deeper than this; the first one is kept
	stackKept := false
	for _, l := range lines {
		ind := len(l) - len(strings.TrimLeft(l, " "))
		t := strings.TrimSpace(l)
		if skipIndent >= 0 {
			if t == "..." && ind > skipIndent || ind > skipIndent && t != "" && !tapOkRE.MatchString(l) && !tapNotOkRE.MatchString(l) && !strings.HasPrefix(t, "# Subtest:") {
				continue
			}
			skipIndent = -1
		}
		if stack >= 0 {
			if ind > stack && t != "..." {
				if !stackKept {
					out = append(out, l)
					stackKept = true
				}
				continue
			}
			stack = -1
		}
		switch {
		case tapOkRE.MatchString(l):
			skipIndent = ind
		case strings.HasPrefix(t, "stack: |"):
			stack, stackKept = ind, false
		case tapNoiseRE.MatchString(l):
		default:
			out = append(out, l)
		}
	}
	return out
}

// testNoiseStarts are the words testNoiseRE's alternatives after leading space begin with, but for
// the pytest -v line it decides itself.
var testNoiseStarts = []string{"✓", "√", "✔", "PASS", "ok", "test ", "platform ", "rootdir:", "plugins:", "cachedir:",
	"configfile:", "collect", "Compiling ", "Finished ", "Running ", "Downloaded ", "Downloading ", "Fresh ", "Blocking "}

// isTestNoise is testNoiseRE.MatchString(l), the pytest -v line of a passing test ("a.py::t
// PASSED", most lines of a long run) decided without the regexp, and the regexp run only on the
// lines that begin like one of its other alternatives: RE2's backtracker visits every byte of a
// line for each alternative. TestTestNoiseMatchesRE holds the two equal.
func isTestNoise(l string) bool {
	start := 0
	for start < len(l) && isRESpace(l[start]) {
		start++
	}
	if start == len(l) {
		return true
	}
	// \S+::\S+ PASSED: the first word holds "::" with something either side, " PASSED" follows it.
	end := start
	for end < len(l) && !isRESpace(l[end]) {
		end++
	}
	t, word := l[start:], l[start:end]
	if strings.HasPrefix(l[end:], " PASSED") && len(word) > 3 {
		if i := strings.Index(word[1:], "::"); i >= 0 && i+3 < len(word) {
			return true
		}
	}
	if l[0] != '_' && l[0] != '=' && !slices.ContainsFunc(testNoiseStarts, func(p string) bool { return strings.HasPrefix(t, p) }) {
		return false
	}
	return testNoiseRE.MatchString(l)
}

// isRESpace says whether RE2's \s matches c.
func isRESpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// isPytestDots is pytestDotsRE.MatchString(t) for a trimmed line, which can match only a line that
// ends with a progress character or the "[ 42%]" after them.
func isPytestDots(t string) bool {
	return t != "" && strings.IndexByte(".sxX]", t[len(t)-1]) >= 0 && pytestDotsRE.MatchString(t)
}

// isRunnerNoise is runnerNoiseRE behind a cheap test.
func isRunnerNoise(l string) bool {
	return (strings.Contains(l, "note: ") || strings.Contains(l, ": ") || strings.HasSuffix(l, "... ok") || strings.Contains(l, "ℹ ")) &&
		runnerNoiseRE.MatchString(l)
}
