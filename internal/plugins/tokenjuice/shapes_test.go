package tokenjuice

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPinner: the lines a failure must keep are recognised by their shape, whatever printed
// them; ordinary lines are not pinned, and an assertion block ends at a stack frame.
func TestPinner(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []bool
	}{
		{"go got/want", []string{"=== RUN   TestTax", "    tax_test.go:9: Tax(1999) = 164, want 165", "PASS"},
			[]bool{false, true, false}},
		{"rust left/right", []string{"thread 'tests::t' (7) panicked at src/lib.rs:5:9:", "assertion `left == right` failed", "  left: 164", " right: 165", "note: run with `RUST_BACKTRACE=1`"},
			[]bool{true, true, true, true, false}},
		{"rust panic message", []string{"thread 'main' panicked at src/main.rs:2:5:", "attempt to multiply with overflow", "ok"},
			[]bool{true, true, false}},
		{"node assert diff", []string{"AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:", "+ actual - expected", "", "+ 61.279999999999994", "- 61.28", "    at TestContext.<anonymous> (file:///t.js:13:12)", "+ not a value after the frame"},
			[]bool{true, true, false, true, true, false, false}},
		{"tap values", []string{"not ok 4 - code save10", "  ---", "  error: |-", "    Expected values to be strictly equal:", "    100 !== 90", "  expected: 90", "  actual: 100"},
			[]bool{true, false, false, true, true, true, true}},
		{"python", []string{"AssertionError: 2 != 3", "FAILED (failures=3, errors=1)", "Ran 8 tests in 0.009s", "KeyError: 'EF'"},
			[]bool{true, true, true, true}},
		{"exit statuses", []string{"exit status 2", "make: *** [Makefile:9: build/parse.o] Error 1", "collect2: error: ld returned 1 exit status", "Process finished with exit code 137", "npm error code ELIFECYCLE", "the exit of the tunnel"},
			[]bool{true, true, true, true, true, false}},
		{"exception group boxes", []string{"  | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)", "    | Traceback (most recent call last):",
			`    |   File "/p/eg.py", line 6, in fetch`, "    |     raise KeyError(name)", "    | KeyError: 'stock'", "    +------------------------------------"},
			[]bool{true, false, true, false, true, false}},
		{"ordinary lines", []string{"2026-01-05T10:00:00Z INFO GET /api/items/1 200", "compiling 12 files", "+ set -euo pipefail", "- item"},
			[]bool{false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pinner{}
			got := make([]bool, len(tt.lines))
			for i, l := range tt.lines {
				got[i] = p.pin([]byte(l))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pinned (-want +got):\n%s\nlines: %q", diff, tt.lines)
			}
		})
	}
}

// TestPinnedLinesSurviveSampling: a long output whose failures sit in its middle keeps every
// pinned line, though its budgets would have sampled them away.
func TestPinnedLinesSurviveSampling(t *testing.T) {
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "step %d: processed record %d of the batch without trouble\n", i, i*7)
		if i%40 == 20 {
			fmt.Fprintf(&b, "    check_test.go:%d: Total(%d) = %d, want %d\n", i, i, i*2, i*2+1)
		}
	}
	b.WriteString("exit status 1\n")
	out := Compact(Input{Command: "./run-checks", ExitCode: 1, Output: []byte(b.String())})
	if out.Raw {
		t.Fatal("left raw")
	}
	for i := 20; i < 400; i += 40 {
		if want := fmt.Sprintf("Total(%d) = %d, want %d", i, i*2, i*2+1); !strings.Contains(out.Text, want) {
			t.Errorf("lost %q", want)
		}
	}
	if !strings.Contains(out.Text, "exit status 1") {
		t.Error("lost the exit status")
	}
}

func TestJSONOutline(t *testing.T) {
	var checks []string
	for i := range 30 {
		status := 200
		if i == 17 {
			status = 503
		}
		checks = append(checks, fmt.Sprintf(`    {"id": "c%02d", "status": %d, "ms": %d}`, i, status, i*13%97))
	}
	pretty := "{\n  \"service\": \"api\",\n  \"version\": \"2.14.3\",\n  \"healthy\": false,\n  \"engines\": {\n    \"node\": \">= 18\"\n  },\n" +
		"  \"checks\": [\n" + strings.Join(checks, ",\n") + "\n  ],\n  \"uptime\": 1843321\n}\n"
	tests := []struct {
		name, in string
		want     []string // substrings of the outline
		absent   []string
	}{
		{"pretty object", pretty,
			[]string{`"version": "2.14.3"`, `"healthy": false`, `"uptime": 1843321`, `"engines": {"node": ">= 18"}`, `[30 items: `, `"id": "c00"`, `"id": "c17", "status": 503`, `"id": "c29"`},
			[]string{`"id": "c10"`}},
		{"minified", `{"page":3,"total":4310,"items":[` + strings.Repeat(`{"sku":"A","n":1},`, 40) + `{"sku":"LAST","n":2}]}`,
			[]string{`"page":3`, `"total":4310`, `[41 items: {"sku":"A","n":1}`, `"LAST"`}, nil},
		{"sequence", strings.Repeat("{\"k\": 1}\n", 20) + "{\"k\": 2}\n",
			[]string{"[21 JSON values]", "[0] {\"k\": 1}", "[20] {\"k\": 2}", "… 15 items omitted …"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := reduceJSON(&doc{raw: []byte(tt.in)})
			if !ok {
				t.Fatal("not read as JSON")
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, w := range tt.absent {
				if strings.Contains(got, w) {
					t.Errorf("%q should have been left out of:\n%s", w, got)
				}
			}
		})
	}
	for _, bad := range []string{`{"a": 1`, `[1, 2,]`, `{"a" 1}`, `[main 1a2b3c] fix things`, `{} trailing`, `"just a string"`} {
		if parseJSONValues([]byte(bad)) != nil {
			t.Errorf("%q read as JSON", bad)
		}
	}
	// A map of thousands of entries is sampled like a listing, within its budget.
	var m strings.Builder
	m.WriteString("{\n")
	for i := range 3000 {
		fmt.Fprintf(&m, "  \"node-%04d\": {\"ready\": true, \"pods\": %d},\n", i, i%7)
	}
	m.WriteString("  \"last\": {\"ready\": false, \"pods\": 0}\n}\n")
	big, ok := reduceJSON(&doc{raw: []byte(m.String())})
	if !ok || charCount(big) > jsonTopBudget+200 || !strings.Contains(big, "keys omitted") || !strings.Contains(big, `"last": {"ready": false, "pods": 0}`) {
		t.Errorf("3001-key map: %d chars, ok %v:\n%.400s", charCount(big), ok, big)
	}
	out := Compact(Input{Command: "npm view --json express", Output: []byte(pretty)})
	if out.Rule != "json" {
		t.Errorf("rule %s, want json", out.Rule)
	}
}

// FuzzParseJSON: the parser never panics, accepts every valid document that starts with a
// bracket, and its outline of what it accepts never panics either.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2, {"b": null}], "c": "d\"e"}`, `[true, false, -1.5e3]`, "{\"x\": 1}\n{\"x\": 2}\n", `{"a":`, `[`, `{"\u00e9": "\\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		vals := parseJSONValues(b)
		t2 := strings.TrimSpace(string(b))
		if json.Valid(b) && len(t2) > 1 && (t2[0] == '{' || t2[0] == '[') && len(b) <= jsonMaxBytes && vals == nil && jsonDepth(b) <= jsonMaxDepth {
			t.Fatalf("valid JSON refused: %q", b)
		}
		if vals != nil {
			if _, ok := reduceJSON(&doc{raw: b, json: vals}); !ok {
				t.Fatal("parsed values not outlined")
			}
		}
	})
}

// jsonDepth is the deepest nesting of brackets in b, outside strings.
func jsonDepth(b []byte) int {
	depth, deepest, inStr := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '{' || c == '['):
			depth++
			deepest = max(deepest, depth)
		case !inStr && (c == '}' || c == ']'):
			depth--
		}
	}
	return deepest
}

func TestListingRules(t *testing.T) {
	tests := []struct {
		name, cmd, in, want string
	}{
		{"apt-cache policy", "apt-cache policy git nginx",
			"git:\n  Installed: 1:2.39.5-0+deb12u3\n  Candidate: 1:2.39.5-0+deb12u3\n  Version table:\n *** 1:2.39.5-0+deb12u3 500\n        500 http://deb.example/debian bookworm/main amd64 Packages\n        100 /var/lib/dpkg/status\n" +
				"nginx:\n  Installed: (none)\n  Candidate: 1.22.1-9+deb12u11\n  Version table:\n     1.22.1-9+deb12u11 500\n        500 http://deb.example/debian-security bookworm-security/main amd64 Packages\n",
			"git: Installed: 1:2.39.5-0+deb12u3 Candidate: 1:2.39.5-0+deb12u3\nnginx: Installed: (none) Candidate: 1.22.1-9+deb12u11\n(2 version tables omitted)"},
		{"dpkg -l", "dpkg -l 'python3*'",
			"Desired=Unknown/Install/Remove/Purge/Hold\n| Status=Not/Inst/Conf-files/Unpacked/halF-conf/Half-inst/trig-aWait/Trig-pend\n|/ Err?=(none)/Reinst-required (Status,Err: uppercase=bad)\n" +
				"||/ Name           Version      Architecture Description\n+++-==============-============-============-=================================\n" +
				"ii  python3        3.11.2-1+b1  amd64        interactive high-level object-oriented language\nun  python3-all    <none>       <none>       (no description available)\nii  python3-apt    2.6.0        amd64        Python 3 interface to libapt-pkg\n",
			"3 packages (status: name version; architectures and descriptions omitted):\nii (2): python3 3.11.2-1+b1, python3-apt 2.6.0\nun (1): python3-all"},
		{"ps", "ps aux",
			"USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\nroot           1  0.0  0.0   4360  3044 ?        S    09:12   0:00 bash\n" +
				"root          21  0.0  0.0   2920  1800 ?        S    09:12   0:00 sleep 600\nroot          22  0.0  0.0   2920  1832 ?        S    09:12   0:00 sleep 600\n",
			"USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\nroot 1 0.0 0.0 4360 3044 ? S 09:12 0:00 bash\nroot 21 0.0 0.0 2920 1800 ? S 09:12 0:00 sleep 600  (×2, pids 21 22)\n3 processes"},
		{"diff -u", "diff -u a.conf b.conf",
			"--- a.conf\t2026-12-01 09:11:40.979236869 +0000\n+++ b.conf\t2026-12-01 09:11:40.979415735 +0000\n@@ -1,5 +1,5 @@\n one\n two\n-port = 80\n+port = 8080\n four\n five\n",
			"--- a.conf\n+++ b.conf\n@@ -1,5 +1,5 @@\n-port = 80\n+port = 8080\n(4 lines of context omitted)"},
		{"apt-cache show", "apt-cache show git",
			"Package: git\nVersion: 1:2.39.5-0+deb12u3\nInstalled-Size: 44890\nDepends: libc6 (>= 2.34), perl\nTag: devel::lang:perl,\n implemented-in::c\nSection: vcs\nMD5sum: b493c1ad\n\nPackage: git\nVersion: 1:2.39.5-0+deb12u2\n",
			"Package: git\nVersion: 1:2.39.5-0+deb12u3\nDepends: libc6 (>= 2.34), perl\nSection: vcs\n\nPackage: git\nVersion: 1:2.39.5-0+deb12u2\n(2 records of 11 lines: 1 continuation lines and 3 checksum, size and file fields omitted)"},
		{"apt-cache search", "apt-cache search sqlite",
			"libsqlite3-dev - SQLite 3 development files\nsqlite3 - Command line interface for SQLite 3\n",
			"2 packages (descriptions omitted):\nlibsqlite3-dev sqlite3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := parseCommand(tt.cmd, nil)
			r := classify(cmd)
			got, ok := r.reduce(&doc{src: cmd.source(), raw: []byte(tt.in), lines: normalize([]byte(tt.in))})
			if !ok {
				t.Fatalf("rule %s refused the output", r.id)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rule %s (-want +got):\n%s", r.id, diff)
			}
		})
	}
}

func TestTapFilter(t *testing.T) {
	in := []string{"TAP version 13", "# Subtest: sums", "ok 1 - sums", "  ---", "  duration_ms: 0.3", "  ...",
		"not ok 2 - rounds", "  ---", "  duration_ms: 0.4", "  location: '/p/t.js:29:3'", "  failureType: 'testCodeFailure'",
		"  error: |-", "    1.64 !== 1.65", "  code: 'ERR_ASSERTION'", "  expected: 1.65", "  actual: 1.64", "  stack: |-",
		"    TestContext.<anonymous> (file:///p/t.js:30:12)", "    Test.runInAsyncScope (node:async_hooks:206:9)", "  ...", "1..2", "# pass 1", "# fail 1", "# todo 0"}
	want := []string{"not ok 2 - rounds", "  location: '/p/t.js:29:3'", "  error: |-", "    1.64 !== 1.65", "  expected: 1.65", "  actual: 1.64",
		"    TestContext.<anonymous> (file:///p/t.js:30:12)", "# pass 1", "# fail 1"}
	if diff := cmp.Diff(want, tapFilter(in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRepeatStage(t *testing.T) {
	block := []string{"✖ sums price times quantity", "  AssertionError: Expected values to be strictly equal:", "  + 61.279999999999994", "  - 61.28"}
	in := append(append(append([]string{"▶ subtotal"}, block...), "✖ failing tests:", ""), block...)
	for i := range block[1:] {
		in[len(in)-3+i] = strings.TrimLeft(in[len(in)-3+i], " ") // the summary indents anew
	}
	c := &collector{}
	feedLines(in, &repeatStage{next: c})
	want := append(append([]string{"▶ subtotal"}, block...), "✖ failing tests:", "", "… 4 lines repeated from above …")
	if diff := cmp.Diff(want, c.lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Short repeats pass through.
	c = &collector{}
	feedLines([]string{"}", "]", "x", "}", "]"}, &repeatStage{next: c})
	if diff := cmp.Diff([]string{"}", "]", "x", "}", "]"}, c.lines); diff != "" {
		t.Errorf("short repeat (-want +got):\n%s", diff)
	}
}

func TestMeterStage(t *testing.T) {
	in := []string{"  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current",
		"                                 Dload  Upload   Total   Spent    Left  Speed",
		"  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0*   Trying 127.0.0.1:18765...",
		" 45 2929k   45 1318k    0     0  1200k      0  0:00:02  0:00:01  0:00:01 1200k",
		"100 2929k  100 2929k    0     0  2400k      0  0:00:01  0:00:01 --:--:-- 2400k", "* Closing connection 0"}
	c := &collector{}
	feedLines(in, &meterStage{next: c})
	want := []string{"*   Trying 127.0.0.1:18765...", "100 2929k  100 2929k    0     0  2400k      0  0:00:01  0:00:01 --:--:-- 2400k", "* Closing connection 0"}
	if diff := cmp.Diff(want, c.lines); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeTestEvents(t *testing.T) {
	const (
		buildHead = `{"ImportPath":"example.com/demo/broken [example.com/demo/broken.test]","Action":"build-output","Output":"# example.com/demo/broken [example.com/demo/broken.test]\n"}`
		buildErr  = `{"ImportPath":"example.com/demo/broken [example.com/demo/broken.test]","Action":"build-output","Output":"broken/broken.go:6:9: invalid operation: n / \"2\" (mismatched types int and untyped string)\n"}`
		buildFail = `{"ImportPath":"example.com/demo/broken [example.com/demo/broken.test]","Action":"build-fail"}`
		pkgFail   = `{"Time":"2026-12-02T04:04:12Z","Action":"output","Package":"example.com/demo/broken","Output":"FAIL\texample.com/demo/broken [build failed]\n"}`
		pkgFailEv = `{"Time":"2026-12-02T04:04:12Z","Action":"fail","Package":"example.com/demo/broken","Elapsed":0,"FailedBuild":"example.com/demo/broken [example.com/demo/broken.test]"}`
	)
	for _, tc := range []struct {
		name  string
		lines []string
		asked bool // the command has -json
		want  []string
	}{{
		name: "test2json events",
		lines: []string{`{"Time":"2026-12-01T09:06:29Z","Action":"run","Package":"p","Test":"TestTitle"}`,
			`{"Time":"2026-12-01T09:06:29Z","Action":"output","Package":"p","Test":"TestTitle","Output":"    r_test.go:15: Title(\"o'neil\") = \"O'neil\", want \"O'Neil\"\n"}`,
			`{"Time":"2026-12-01T09:06:29Z","Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}`},
		want: []string{`    r_test.go:15: Title("o'neil") = "O'neil", want "O'Neil"`, "FAIL\tp\t0.01s"},
	}, {
		// Go 1.24+: the stream begins with the build errors, as build-output events
		name:  "build-output events first",
		lines: []string{buildHead, buildErr, buildFail, pkgFail, pkgFailEv},
		want: []string{"# example.com/demo/broken [example.com/demo/broken.test]",
			`broken/broken.go:6:9: invalid operation: n / "2" (mismatched types int and untyped string)`,
			"FAIL\texample.com/demo/broken [build failed]"},
	}, {
		// before Go 1.24, or GODEBUG=gotestjsonbuildtext=1: the errors are text on stderr
		name: "build errors as text ahead of events",
		lines: []string{"# example.com/demo/broken", "broken/broken.go:5:6: declared and not used: unused", "",
			`{"Time":"2026-12-02T04:04:12Z","Action":"start","Package":"example.com/demo/broken"}`, pkgFail, pkgFailEv},
		want: []string{"# example.com/demo/broken", "broken/broken.go:5:6: declared and not used: unused", "FAIL\texample.com/demo/broken [build failed]"},
	}, {
		// go build -json, or a stream cut short: no fail event reports the build that failed
		name:  "unreported build-fail",
		lines: []string{buildHead, buildErr, buildFail},
		want: []string{"# example.com/demo/broken [example.com/demo/broken.test]",
			`broken/broken.go:6:9: invalid operation: n / "2" (mismatched types int and untyped string)`,
			"FAIL\texample.com/demo/broken [example.com/demo/broken.test] [build failed]"},
	}, {
		name: "output ending mid-line before text",
		lines: []string{`{"Time":"2026-12-01T09:06:29Z","Action":"output","Package":"p","Output":"partial"}`,
			`{"Time":"2026-12-01T09:06:29Z","Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}`, "go: warning"},
		want: []string{"partialFAIL\tp\t0.01s", "go: warning"},
	}, {
		name:  "plain go test output",
		lines: []string{"ok  \tp\t0.01s"},
	}, {
		// a test that prints a JSON line does not turn plain output into an event stream
		name:  "one event-like line among text",
		lines: []string{"=== RUN   TestLog", `{"Action":"deploy","Output":""}`, "--- FAIL: TestLog (0.00s)", "FAIL\tp\t0.01s"},
	}, {
		// go test -json -x: go's own stderr outnumbers the events, which are still read
		name: "more stderr than events, -json asked",
		lines: []string{"WORK=/tmp/go-build1", "mkdir -p $WORK/b001/", "cd /src/example", "/usr/local/go/pkg/tool/linux_amd64/compile -o $WORK/b001/_pkg_.a",
			`{"Time":"2026-12-01T09:06:29Z","Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}`},
		asked: true,
		want:  []string{"WORK=/tmp/go-build1", "mkdir -p $WORK/b001/", "cd /src/example", "/usr/local/go/pkg/tool/linux_amd64/compile -o $WORK/b001/_pkg_.a", "FAIL\tp\t0.01s"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decodeTestEvents(tc.lines, tc.asked)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestGoBuildJSONKeepsEveryError: go build -json (Go 1.24+) reports compile errors as build-output
// events; they used to be outlined as a JSON sequence, whose middle elements (errors) were omitted.
func TestGoBuildJSONKeepsEveryError(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"ImportPath":"example.com/demo/broken","Action":"build-output","Output":"# example.com/demo/broken\n"}` + "\n")
	names := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"}
	for i, n := range names {
		fmt.Fprintf(&b, `{"ImportPath":"example.com/demo/broken","Action":"build-output","Output":"broken/broken.go:%d:6: undefined: %s\n"}`+"\n", i+3, n)
	}
	b.WriteString(`{"ImportPath":"example.com/demo/broken","Action":"build-fail"}` + "\n")
	out := Compact(Input{Command: "go build -json ./...", ExitCode: 1, Output: []byte(b.String())})
	if out.Raw || out.Rule != "build/go" {
		t.Fatalf("rule %s, raw %v (%s), want build/go compacted:\n%s", out.Rule, out.Raw, out.Reason, out.Text)
	}
	for i, n := range names {
		if want := fmt.Sprintf("broken/broken.go:%d:6: undefined: %s\n", i+3, n); !strings.Contains(out.Text, want) {
			t.Errorf("error lost: %q\n%s", want, out.Text)
		}
	}
	if !strings.Contains(out.Text, "FAIL\texample.com/demo/broken [build failed]") {
		t.Errorf("the failed build is not said:\n%s", out.Text)
	}
	// go run of a program that prints JSON is still outlined as JSON
	out = Compact(Input{Command: "go run ./cmd/report", Output: []byte(`{"items": [` + strings.Repeat(`{"id": 1, "name": "x"},`, 200) + `{"id": 2}]}`)})
	if out.Rule != "json" {
		t.Errorf("go run printing JSON: rule %s, want json", out.Rule)
	}
}

// TestGitStatusKeepsEveryPath: the paths of a status are never sampled below its budget (the
// reference and earlier versions dropped the middle of a long section), and a status too large
// for it says what it left out.
func TestGitStatusKeepsEveryPath(t *testing.T) {
	var b strings.Builder
	b.WriteString("On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n")
	var paths []string
	for i := range 17 {
		p := fmt.Sprintf("packages/web/src/components/dashboard/widgets/__tests__/Widget%02dPanel.test.tsx", i)
		paths = append(paths, p)
		fmt.Fprintf(&b, "\tmodified:   %s\n", p)
	}
	b.WriteString("\nno changes added to commit (use \"git add\" and/or \"git commit -a\")\n")
	out := Compact(Input{Command: "git status", Output: []byte(b.String())})
	for _, p := range paths {
		if !strings.Contains(out.Text, p) {
			t.Errorf("path lost: %s", p)
		}
	}
	if strings.Contains(out.Text, "omitted") {
		t.Errorf("a status within budget was sampled:\n%s", out.Text)
	}

	b.Reset()
	b.WriteString("On branch main\nUntracked files:\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "\tbuild/generated/assets/chunk-%05d.js\n", i)
	}
	out = Compact(Input{Command: "git status", Output: []byte(b.String())})
	if out.CompactChars > statusPathsBudget+400 || !strings.Contains(out.Text, "paths omitted") ||
		!strings.Contains(out.Text, "chunk-00000.js") || !strings.Contains(out.Text, "chunk-02999.js") {
		t.Errorf("large status: %d chars:\n%.600s", out.CompactChars, out.Text)
	}
}

// TestRustcLabels: the primary label of a rustc diagnostic is kept when a secondary label precedes
// it on the same line ("---   ^^^ expected `u32`, found `&str`").
func TestRustcLabels(t *testing.T) {
	in := "error[E0308]: mismatched types\n  --> src/main.rs:21:18\n   |\n21 |     let q: u32 = \"7\";\n   |            ---   ^^^ expected `u32`, found `&str`\n   |            |\n   |            expected due to this\n"
	got, _ := reduceCargoBuild(&doc{lines: normalize([]byte(in))})
	if !strings.Contains(got, "^ expected `u32`, found `&str`") {
		t.Errorf("label lost:\n%s", got)
	}
}

// TestFindStartingPoint: find prints its starting directory first; an outline names the first
// entry under it, not the directory again.
func TestFindStartingPoint(t *testing.T) {
	var b strings.Builder
	b.WriteString("/usr/share/doc\n")
	for i := range 400 {
		fmt.Fprintf(&b, "/usr/share/doc/package-with-a-long-name-%03d\n", i)
	}
	out := Compact(Input{Command: "find /usr/share/doc -maxdepth 1", Output: []byte(b.String())})
	if !strings.Contains(out.Text, "first /usr/share/doc/package-with-a-long-name-000,") {
		t.Errorf("first entry not named:\n%.300s", out.Text)
	}
}

// TestGitLogKeepsGitMessages: what git itself says around a log (a refname warning before it, the
// missing object that ended the walk after it) survives the one-line-per-commit sample, in git log
// and in git show alike.
func TestGitLogKeepsGitMessages(t *testing.T) {
	var commits strings.Builder
	for i := range 200 {
		fmt.Fprintf(&commits, "commit %040x\nAuthor: A <a@example.com>\nDate:   Mon Jan 5 10:00:00 2026 +0000\n\n    change %d\n\n", i, i)
	}
	show := "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: A <a@example.com>\nDate:   Mon Jan 5 10:00:00 2026 +0000\n\n    change\n\n" +
		"diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1,300 +1,300 @@\n" + strings.Repeat("-old line\n+new line\n", 300)
	tests := []struct {
		name, cmd, output string
		want              []string
	}{
		{"error and fatal after the commits", "git log", commits.String() +
			"error: Could not read 0123456789abcdef0123456789abcdef01234567\nfatal: Failed to traverse parents of commit 00000000000000000000000000000000000000c7\n",
			[]string{"error: Could not read 0123456789abcdef0123456789abcdef01234567", "fatal: Failed to traverse parents of commit 00000000000000000000000000000000000000c7"}},
		{"warning before the commits", "git log main", "warning: refname 'main' is ambiguous.\n" + commits.String(),
			[]string{"warning: refname 'main' is ambiguous."}},
		{"fatal after a shown diff", "git show HEAD", show + "fatal: unable to read tree 0123456789abcdef\n",
			[]string{"fatal: unable to read tree 0123456789abcdef"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Compact(Input{Command: tt.cmd, ExitCode: 128, Output: []byte(tt.output), Handle: "tj_000000000000"})
			if out.Raw || !strings.HasPrefix(out.Rule, "git/") {
				t.Fatalf("rule %s, raw %v: want a compacted git log", out.Rule, out.Raw)
			}
			var missing []string
			for _, w := range tt.want {
				if !strings.Contains(out.Text, w+"\n") {
					missing = append(missing, w)
				}
			}
			if len(missing) > 0 {
				t.Errorf("lost %q:\n%s", missing, out.Text)
			}
		})
	}
}

// TestLsKeepsItsMessages: what ls says about an operand or a directory it could not read is not a
// name to sample away (the listing would read as complete), wherever it falls and however ls was
// invoked.
func TestLsKeepsItsMessages(t *testing.T) {
	names := func(from, n int) string {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, "file%d.txt\n", i)
		}
		return b.String()
	}
	long := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "-rw-r--r-- 1 u u 12 Jan  1 00:00 file%d.txt\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name, cmd, output, want string
	}{
		{"ls -R, a subdirectory it cannot open", "ls -R", ".:\n" + names(0, 300) + "\n./z:\nls: cannot open directory './z': Permission denied\n\n./y:\n" + names(300, 300),
			"ls: cannot open directory './z': Permission denied"},
		{"short format, an operand missing", "ls /a /b", names(0, 300) + "ls: cannot access '/b': No such file or directory\n" + names(300, 300),
			"ls: cannot access '/b': No such file or directory"},
		{"long format, run by its path", "/bin/ls -la /a /b", "/a:\ntotal 1\n" + long(300) + "/bin/ls: cannot access '/b': No such file or directory\n" + long(300),
			"/bin/ls: cannot access '/b': No such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Compact(Input{Command: tt.cmd, ExitCode: 2, Output: []byte(tt.output), Handle: "tj_000000000000"})
			if out.Raw || out.Rule != "inventory/ls" {
				t.Fatalf("rule %s, raw %v: want a compacted listing", out.Rule, out.Raw)
			}
			if !strings.Contains(out.Text, "\n"+tt.want+"\n") {
				t.Errorf("lost %q:\n%s", tt.want, out.Text)
			}
		})
	}
}

// TestGrepSeparatesItsMessages: what grep or rg says about files it could not read is neither
// counted as matches nor cut as one ("grep:/proc/1/mem"): a search that found one match behind
// 305 unreadable files said "306 matches in 2 files, most matches: grep (305)".
func TestGrepSeparatesItsMessages(t *testing.T) {
	output := func(prog string) string {
		var b strings.Builder
		for i := range 300 {
			fmt.Fprintf(&b, "%s: /proc/%d/mem: Permission denied\n", prog, i)
		}
		b.WriteString("/etc/a.conf:3:foo = 1\n/etc/b.conf:9:foo = 2\n")
		for i := range 5 {
			fmt.Fprintf(&b, "%s: /root/d%d: Permission denied\n", prog, i)
		}
		return b.String()
	}
	for _, prog := range []string{"grep", "rg"} {
		t.Run(prog, func(t *testing.T) {
			out := Compact(Input{Command: prog + " -rn foo /", ExitCode: 2, Output: []byte(output(prog)), Handle: "tj_000000000000"})
			if out.Raw || out.Rule != "search/grep" {
				t.Fatalf("rule %s, raw %v: want a compacted search", out.Rule, out.Raw)
			}
			lines := strings.Split(out.Text, "\n")
			want := []string{"2 matches in 2 files", "/etc/a.conf:3:foo = 1", "/etc/b.conf:9:foo = 2", "305 messages from " + prog + ":", prog + ": /proc/0/mem: Permission denied"}
			if diff := cmp.Diff(want, lines[:len(want)]); diff != "" {
				t.Errorf("head of the compacted search (-want +got):\n%s\n%s", diff, out.Text)
			}
			if !strings.Contains(out.Text, "\n"+prog+": /root/d4: Permission denied\n") {
				t.Errorf("the last message is lost:\n%s", out.Text)
			}
		})
	}
}

// TestGoTestNoTestsToRun: a package whose -run pattern matched no test is not reported as one
// whose tests passed: `go test -run TestTypo ./...` read "ok: 41 packages", as if the test ran.
func TestGoTestNoTestsToRun(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "ok  \texample.com/m/p%d\t0.0%02ds [no tests to run]\n", i, i)
	}
	b.WriteString("ok  \texample.com/m/z\t0.031s\nok  \texample.com/m/c\t(cached) [no tests to run]\n")
	out := Compact(Input{Command: "go test -run TestTypo ./...", Output: []byte(b.String()), Handle: "tj_000000000000"})
	if out.Raw || out.Rule != "tests/go" {
		t.Fatalf("rule %s, raw %v: want a compacted go test", out.Rule, out.Raw)
	}
	lines := strings.Split(out.Text, "\n")
	if want := "ok: 42 packages (1 cached); 41 [no tests to run]"; lines[0] != want {
		t.Errorf("summary = %q, want %q\n%s", lines[0], want, out.Text)
	}
	for _, want := range []string{"\nexample.com/m/p0 [no tests to run]\n", "\nexample.com/m/z\n", "\nexample.com/m/c [no tests to run]\n"} {
		if !strings.Contains(out.Text, want) {
			t.Errorf("missing %q:\n%s", strings.TrimSpace(want), out.Text)
		}
	}
}

// TestSimilarKeepsStatusChanges: lines that differ only in numbers are similar, unless one number
// says how something ended and differs in its first digit: "job 150: exit 1" among 299 lines of
// "exit 0" was folded into "… 298 similar lines omitted …" between two lines of exit 0.
func TestSimilarKeepsStatusChanges(t *testing.T) {
	pairs := []struct {
		a, b string
		want bool
	}{
		{"job 0: exit 0", "job 1: exit 0", true},
		{"job 1: exit 0", "job 2: exit 1", false},
		{"[3] exited with status 0", "[4] exited with status 2", false},
		{"host3: rc=0", "host4: rc=1", false},
		{"check-3 returned 0", "check-4 returned 1", false},
		{"pkg3: 0 errors", "pkg4: 2 errors", false},
		{"test 3 ... 0 failures", "test 4 ... 1 failures", false},
		// the count named first: "host90: failures=4" among "failures=0" was folded away
		{"host3: failures=0", "host4: failures=4", false},
		{"src/f1.go: errors: 0", "src/f2.go: errors: 3", false},
		{"suite-3: Failed: 0", "suite-4: Failed: 2", false},
		{"pkg3: warnings=0", "pkg4: warnings=7", false},
		{"host3: failures=0", "host4: failures=0", true},
		{"error 1 of 9", "error 2 of 9", false},
		{"job 1: exit 1", "job 2: exit 1", true},
		{"GET /a 3ms status 200", "GET /a 5ms status 201", true},
		{"GET /a 3ms status 200", "GET /a 5ms status 500", false},
		{"12:00:00 GET /a 200 0ms", "12:00:01 GET /a 200 3ms", true},
		{"step 0 of 9", "step 1 of 9", true},
	}
	for _, p := range pairs {
		if got := similar(p.a, p.b); got != p.want {
			t.Errorf("similar(%q, %q) = %v, want %v", p.a, p.b, got, p.want)
		}
	}
	var b strings.Builder
	for i := range 300 {
		code := 0
		if i == 150 {
			code = 1
		}
		fmt.Fprintf(&b, "job %d: exit %d\n", i, code)
	}
	out := Compact(Input{Command: "./run-all.sh", ExitCode: 1, Output: []byte(b.String()), Handle: "tj_000000000000"})
	if out.Raw || !strings.Contains(out.Text, "\njob 150: exit 1\n") {
		t.Errorf("the failed job is lost (raw %v):\n%s", out.Raw, out.Text)
	}
	b.Reset()
	for i := range 200 {
		fmt.Fprintf(&b, "host%d: failures=%d\n", i, map[bool]int{true: 4}[i == 90])
	}
	out = Compact(Input{Command: "./check-hosts.sh", ExitCode: 1, Output: []byte(b.String()), Handle: "tj_000000000000"})
	if out.Raw || !strings.Contains(out.Text, "\nhost90: failures=4\n") {
		t.Errorf("the failing host is lost (raw %v):\n%s", out.Raw, out.Text)
	}
}
