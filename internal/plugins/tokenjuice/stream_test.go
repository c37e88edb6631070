package tokenjuice

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// collapseRunsRef is the slice form of runStage's collapse; the stage must agree with it.
func collapseRunsRef(lines []string) []string {
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
			if len(lines[j-1]) <= similarLastMax {
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

// selectLinesRef is the slice implementation of selection without salient lines.
func selectLinesRef(lines []string, budget, salBudget int) []string {
	if linesChars(lines) <= budget+salBudget/2 {
		return lines
	}
	return render(lines, sampleKeep(lines, budget), "lines")
}

// randomLines makes lines drawn from a few shapes, so that runs of identical and similar lines,
// blank lines and long lines all occur.
func randomLines(r *rand.Rand, n int) []string {
	shapes := []func() string{
		func() string { return "" },
		func() string { return "same line" },
		func() string { return fmt.Sprintf("worker %d processed batch %d", r.IntN(3), r.IntN(1000)) },
		func() string { return fmt.Sprintf("GET /api/items/%d 200", r.IntN(50)) },
		func() string { return strings.Repeat("x", r.IntN(120)) },
		func() string { return fmt.Sprintf("error: file%d.go:%d: undefined", r.IntN(4), r.IntN(90)) },
	}
	out := make([]string, n)
	for i := range out {
		out[i] = shapes[r.IntN(len(shapes))]()
		if i > 0 && r.IntN(3) == 0 {
			out[i] = out[i-1] // make runs likely
		}
	}
	return out
}

func TestRunStageMatchesSliceCollapse(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		lines := randomLines(r, r.IntN(40))
		c := &collector{}
		feedLines(lines, &runStage{next: c})
		if diff := cmp.Diff(collapseRunsRef(lines), c.lines, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("case %d %q (-slice +stage):\n%s", i, lines, diff)
		}
	}
}

func TestSelectLinesMatchesSampleKeep(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		lines := randomLines(r, r.IntN(200))
		budget, salBudget := 50+r.IntN(800), r.IntN(400)
		got := selectLines(lines, budget, nil, salBudget)
		if diff := cmp.Diff(selectLinesRef(lines, budget, salBudget), got); diff != "" {
			t.Fatalf("case %d budget %d (-slice +stream):\n%s", i, budget, diff)
		}
	}
}

// TestSelectLinesSalient checks what the salient sample promises: lines stay in order, a gap line
// stands for every run left out, and salient lines are kept beyond the sample's budget.
func TestSelectLinesSalient(t *testing.T) {
	var lines []string
	for i := range 400 {
		l := fmt.Sprintf("step %03d ok", i)
		if i%37 == 5 {
			l = fmt.Sprintf("step %03d error: disk full", i)
		}
		lines = append(lines, l)
	}
	got := selectLines(lines, 300, isSalient, 400)
	errs, last := 0, -1
	for _, l := range got {
		var n int
		if _, err := fmt.Sscanf(l, "step %03d", &n); err == nil {
			if n <= last {
				t.Fatalf("out of order: %q after step %d", l, last)
			}
			last = n
			if strings.Contains(l, "error") {
				errs++
			}
		} else if !strings.HasPrefix(l, "… ") {
			t.Fatalf("unexpected line %q", l)
		}
	}
	if errs < 6 {
		t.Errorf("kept %d of 11 error lines, want most of them: %q", errs, got)
	}
	if n := linesChars(got); n > 300+400+200 {
		t.Errorf("kept %d chars for budgets 300+400", n)
	}
}

func TestTraceStage(t *testing.T) {
	frames := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	join := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name     string
		in, want []string
	}{
		{
			name: "go goroutines",
			in: join([]string{"panic: boom", "", "goroutine 1 [running]:"},
				frames(40, func(i int) string {
					if i%2 == 1 {
						return fmt.Sprintf("\t/src/app/main.go:%d +0x1f", i)
					}
					return fmt.Sprintf("main.f%d()", i/2)
				}),
				[]string{"", "goroutine 7 [chan receive]:", "runtime.gopark(0x1?)", "\t/usr/local/go/src/runtime/proc.go:460 +0xce",
					"main.w()", "\t/src/app/w.go:3 +0x2",
					"", "goroutine 8 [select]:", "runtime.gopark(0x2?)", "\t/usr/local/go/src/runtime/proc.go:460 +0xce",
					"", "goroutine 9 [chan receive]:", "runtime.gopark(0x3?)", "\t/usr/local/go/src/runtime/proc.go:460 +0xce",
					"main.w()", "\t/src/app/w.go:3 +0x2",
					"", "exit status 2"}),
			want: join([]string{"panic: boom", "", "goroutine 1 [running]:"},
				frames(16, func(i int) string {
					if i%2 == 1 {
						return fmt.Sprintf("\t/src/app/main.go:%d +0x1f", i)
					}
					return fmt.Sprintf("main.f%d()", i/2)
				}),
				[]string{"… 12 frames omitted …", "goroutine 7 [chan receive]:", "main.w()", "\t/src/app/w.go:3 +0x2", "… 1 frames omitted …",
					"… 2 more goroutines omitted …", "exit status 2"}),
		},
		{
			name: "rust backtrace",
			in: []string{"thread 'tests::t' panicked at src/lib.rs:5:9:", "stack backtrace:",
				"   0: __rustc::rust_begin_unwind", "             at /rustc/abc/library/std/src/panicking.rs:689:5",
				"   1: core::panicking::panic_fmt", "             at /rustc/abc/library/core/src/panicking.rs:80:14",
				"   2: invoice::tests::t", "             at ./src/lib.rs:5:9",
				"   3: core::ops::function::FnOnce::call_once", "             at /rustc/abc/library/core/src/ops/function.rs:250:5",
				"note: Some details are omitted"},
			want: []string{"thread 'tests::t' panicked at src/lib.rs:5:9:", "stack backtrace:",
				"   2: invoice::tests::t", "             at ./src/lib.rs:5:9", "… 3 frames omitted …", "note: Some details are omitted"},
		},
		{
			name: "sanitizer frames and shadow memory",
			in: []string{"WRITE of size 1 at 0x602000000015 thread T0",
				"    #0 0x559b in split asan/tok.c:15", "    #1 0x559c in main asan/tok.c:25",
				"    #2 0x7f1a in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58",
				"    #3 0x7f1b in __libc_start_main_impl ../csu/libc-start.c:360", "",
				"SUMMARY: AddressSanitizer: heap-buffer-overflow asan/tok.c:15 in split",
				"Shadow bytes around the buggy address:", "  0x0c047fff7fb0: 00 00 00", "=>0x0c047fff8000: fa fa[05]fa",
				"Shadow byte legend (one shadow byte represents 8 application bytes):", "  Addressable:           00", "==25613==ABORTING"},
			want: []string{"WRITE of size 1 at 0x602000000015 thread T0",
				"    #0 0x559b in split asan/tok.c:15", "    #1 0x559c in main asan/tok.c:25", "… 2 frames omitted …", "",
				"SUMMARY: AddressSanitizer: heap-buffer-overflow asan/tok.c:15 in split",
				"… 5 lines of shadow memory omitted …", "==25613==ABORTING"},
		},
		{
			name: "python traceback",
			in: join([]string{"Traceback (most recent call last):"},
				[]string{
					"  File \"x.py\", line 1, in <module>", "    main()",
					"  File \"x.py\", line 2, in main", "    a()",
					"  File \"x.py\", line 3, in a", "    b()",
					"  File \"x.py\", line 4, in b", "    c()",
					"  File \"x.py\", line 5, in c", "    raise ValueError(1)",
					"ValueError: 1",
				}),
			want: []string{"Traceback (most recent call last):",
				"  File \"x.py\", line 1, in <module>", "    main()",
				"… 1 frames omitted …",
				"  File \"x.py\", line 3, in a", "    b()",
				"  File \"x.py\", line 4, in b", "    c()",
				"  File \"x.py\", line 5, in c", "    raise ValueError(1)",
				"ValueError: 1"},
		},
		{
			name: "jvm frames",
			in: join([]string{"java.lang.IllegalStateException: bad"},
				frames(9, func(i int) string { return fmt.Sprintf("\tat com.example.App.m%d(App.java:%d)", i, i+10) }),
				[]string{"done"}),
			want: join([]string{"java.lang.IllegalStateException: bad"},
				frames(6, func(i int) string { return fmt.Sprintf("\tat com.example.App.m%d(App.java:%d)", i, i+10) }),
				[]string{"… 3 frames omitted …", "done"}),
		},
		{
			name: "short js trace kept whole",
			in:   []string{"TypeError: x", "    at f (a.js:1:2)", "    at g (a.js:3:4)", "    at h (a.js:5:6)", "    at i (a.js:7:8)", "    at j (a.js:9:1)"},
			want: []string{"TypeError: x", "    at f (a.js:1:2)", "    at g (a.js:3:4)", "    at h (a.js:5:6)", "    at i (a.js:7:8)", "    at j (a.js:9:1)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &collector{}
			feedLines(tt.in, &traceStage{next: c})
			if diff := cmp.Diff(tt.want, c.lines); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLineScannerViewsAndOffsets(t *testing.T) {
	in := []byte("\n\nfirst  \r\nsec\x1b[1mond\n\n\nthird\n\n")
	s := newLineScanner(in)
	type line struct {
		Text string
		Off  int
	}
	var got []line
	for {
		l, off, ok := s.next()
		if !ok {
			break
		}
		got = append(got, line{string(l), off})
	}
	want := []line{{"first", 2}, {"second", 11}, {"", 22}, {"", 22}, {"third", 24}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestStreamingMemory checks that the streaming rules allocate a small fraction of their input:
// a log goes through the generic reducer, a listing through the path outline, a search through
// grep. (Allocation counts are deterministic; this is not a timing test.)
func TestStreamingMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocates tens of megabytes; allocation counts differ under the race detector")
	}
	cases := []struct {
		name string
		in   Input
		max  float64 // bytes allocated per byte of input
	}{
		{"log", Input{Command: "./server", Output: genLog(16 << 20)}, 0.02},
		{"find", Input{Command: "find .", Output: genFind(200_000)}, 0.5},
		{"grep", Input{Command: "grep -rn handle src", Output: genGrep(100_000)}, 0.1},
	}
	for _, c := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out := Compact(c.in)
		runtime.ReadMemStats(&after)
		if out.Raw {
			t.Fatalf("%s: left raw (%s)", c.name, out.Reason)
		}
		ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(c.in.Output))
		t.Logf("%s: %d bytes in, %.3f bytes allocated per byte", c.name, len(c.in.Output), ratio)
		if ratio > c.max {
			t.Errorf("%s: allocated %.3f bytes per input byte, want at most %.2f", c.name, ratio, c.max)
		}
	}
}

// TestPathOutlineStreams: a listing too long to outline whole is outlined by directory within
// its budget, whatever order the paths come in.
func TestPathOutlineStreams(t *testing.T) {
	var interleaved strings.Builder
	for i := range 60_000 {
		fmt.Fprintf(&interleaved, "./d%04d/f%06d.txt\n", i%5000, i)
	}
	for _, c := range []struct {
		name string
		out  []byte
	}{{"depth first", genFind(60_000)}, {"interleaved", []byte(interleaved.String())}} {
		out := Compact(Input{Command: "find .", Output: c.out})
		if out.Raw || out.Rule != "inventory/find" {
			t.Fatalf("%s: rule %s raw %v", c.name, out.Rule, out.Raw)
		}
		if !strings.HasPrefix(out.Text, "60,000 paths, by directory, first ./") {
			t.Errorf("%s: header %q", c.name, out.Text[:min(80, len(out.Text))])
		}
		if out.CompactChars > outlineLinesBudget+1500 {
			t.Errorf("%s: %d chars, budget %d", c.name, out.CompactChars, outlineLinesBudget)
		}
	}
}

func TestGrepRepeatedTexts(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "pkg/m%02d/doc.go:%d:// Package m%02d is generated. DO NOT EDIT.\n", i, 1, i)
	}
	b.WriteString("pkg/core/a.go:10:func Generate() error {\n")
	b.WriteString("pkg/core/a.go:20:\treturn generate(ctx)\n")
	b.WriteString("pkg/core/b.go:7:\treturn generate(ctx)\n")
	out := Compact(Input{Command: "grep -rn generate pkg", Output: []byte(b.String())})
	for _, want := range []string{
		"33 matches in 32 files",
		"return generate(ctx) ×2: pkg/core/a.go:20: pkg/core/b.go:7:",
		"pkg/core/a.go:10:func Generate() error {",
	} {
		if !strings.Contains(out.Text, want) {
			t.Errorf("missing %q in:\n%s", want, out.Text)
		}
	}
}
