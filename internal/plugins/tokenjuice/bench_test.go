package tokenjuice

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/catalog"
)

// genLog makes a service log of about size bytes: timestamps, levels, request lines, an occasional
// warning and error, and a Go panic near the end.
func genLog(size int) []byte {
	var b strings.Builder
	b.Grow(size + 4096)
	for i := 0; b.Len() < size; i++ {
		switch {
		case i%997 == 0:
			fmt.Fprintf(&b, "2026-01-05T10:%02d:%02d.%03dZ ERROR db: query %d failed: connection reset by peer\n", i/60%60, i%60, i%1000, i)
		case i%101 == 0:
			fmt.Fprintf(&b, "2026-01-05T10:%02d:%02d.%03dZ WARN  http: slow request GET /api/items/%d took %dms\n", i/60%60, i%60, i%1000, i, i%900)
		default:
			fmt.Fprintf(&b, "2026-01-05T10:%02d:%02d.%03dZ INFO  http: GET /api/items/%d 200 %dB in %dms\n", i/60%60, i%60, i%1000, i, i%4096, i%40)
		}
	}
	b.WriteString("panic: runtime error: invalid memory address or nil pointer dereference\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:12 +0x1d\n")
	return []byte(b.String())
}

// genFind makes a find listing of n paths in a tree of packages, depth first as find walks it:
// eleven files a directory, 37 directories a package.
func genFind(n int) []byte {
	var b strings.Builder
	for i := range n {
		d := i / 11
		fmt.Fprintf(&b, "./pkg/mod%03d/internal/sub%02d/file_%06d.go\n", d/37, d%37, i)
	}
	return []byte(b.String())
}

// genGoTestJSON makes a go test -json stream of about size bytes: a package that fails to build
// (build-output events first, as Go 1.24+ writes them), then packages of passing tests with the
// odd failing one.
func genGoTestJSON(size int) []byte {
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString(`{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-output","Output":"# example.com/m/broken [example.com/m/broken.test]\n"}` + "\n")
	b.WriteString(`{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-output","Output":"broken/b.go:6:9: undefined: thing\n"}` + "\n")
	b.WriteString(`{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-fail"}` + "\n")
	b.WriteString(`{"Time":"2026-12-02T04:06:16.52Z","Action":"output","Package":"example.com/m/broken","Output":"FAIL\texample.com/m/broken [build failed]\n"}` + "\n")
	b.WriteString(`{"Time":"2026-12-02T04:06:16.52Z","Action":"fail","Package":"example.com/m/broken","Elapsed":0,"FailedBuild":"example.com/m/broken [example.com/m/broken.test]"}` + "\n")
	for p := 0; b.Len() < size; p++ {
		pkg := fmt.Sprintf("example.com/m/pkg%04d", p)
		for i := range 40 {
			fmt.Fprintf(&b, `{"Time":"2026-12-02T04:06:17.%06dZ","Action":"run","Package":"%s","Test":"TestCase%02d"}`+"\n", i, pkg, i)
			fmt.Fprintf(&b, `{"Time":"2026-12-02T04:06:17.%06dZ","Action":"output","Package":"%s","Test":"TestCase%02d","Output":"=== RUN   TestCase%02d\n"}`+"\n", i, pkg, i, i)
			if p%50 == 7 && i == 3 {
				fmt.Fprintf(&b, `{"Time":"2026-12-02T04:06:17.%06dZ","Action":"output","Package":"%s","Test":"TestCase%02d","Output":"    case_test.go:%d: got %d, want %d\n"}`+"\n", i, pkg, i, 10+i, p, p+1)
				fmt.Fprintf(&b, `{"Time":"2026-12-02T04:06:17.%06dZ","Action":"output","Package":"%s","Test":"TestCase%02d","Output":"--- FAIL: TestCase%02d (0.00s)\n"}`+"\n", i, pkg, i, i)
				continue
			}
			fmt.Fprintf(&b, `{"Time":"2026-12-02T04:06:17.%06dZ","Action":"output","Package":"%s","Test":"TestCase%02d","Output":"--- PASS: TestCase%02d (0.00s)\n"}`+"\n", i, pkg, i, i)
			fmt.Fprintf(&b, `{"Time":"2026-12-02T04:06:17.%06dZ","Action":"pass","Package":"%s","Test":"TestCase%02d","Elapsed":0}`+"\n", i, pkg, i)
		}
		status := "ok  "
		if p%50 == 7 {
			status = "FAIL"
		}
		fmt.Fprintf(&b, `{"Time":"2026-12-02T04:06:18Z","Action":"output","Package":"%s","Output":"%s\t%s\t0.012s\n"}`+"\n", pkg, status, pkg)
	}
	return []byte(b.String())
}

func BenchmarkCompact(b *testing.B) {
	cases := []struct {
		name string
		in   Input
	}{
		{"log_50MB", Input{Command: "./server --replay", ExitCode: 2, Output: genLog(50 << 20)}},
		{"find_200k_lines", Input{Command: "find . -name '*.go'", Output: genFind(200_000)}},
		{"grep_200k_matches", Input{Command: "grep -rn handle src", Output: genGrep(200_000)}},
		{"pytest_10MB", Input{Command: "python -m pytest -v", ExitCode: 1, Output: genTests(10 << 20)}},
		{"go_test_json_10MB", Input{Command: "go test -json ./...", ExitCode: 1, Output: genGoTestJSON(10 << 20)}},
		{"git_status_small", Input{Command: "git status", Output: []byte("On branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n\tmodified:   a.go\n")}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in.Output)))
			b.ReportAllocs()
			var out Output
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				out = Compact(c.in)
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(out.CompactChars), "chars_out")
			// Bytes allocated per byte of input: what "flat memory" means here.
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(c.in.Output)), "alloc/in")
		})
	}
}

// BenchmarkMiddlewareSmall shows what the middleware adds to a call whose output is small: it
// decodes the structured content, classifies the command and leaves the result alone.
func BenchmarkMiddlewareSmall(b *testing.B) {
	p := startPlugin(b, "")
	mw := p.Middleware()
	res := execResult("git status --short", 0, " M a.go\n?? notes/\n")
	call := catalog.Call{Tool: execTool}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mw.Process(ctx, call, res); err != nil {
			b.Fatal(err)
		}
	}
}

// genGrep makes grep -rn output: n matches in files of 40 matches each.
func genGrep(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "src/pkg%03d/file%02d.go:%d:\tif err := handle(ctx, req%d); err != nil { return fmt.Errorf(\"handle: %%w\", err) }\n", i/400, i/40%10, i%40*7+1, i%13)
	}
	return []byte(b.String())
}

// genTests makes the output of a long pytest run with a few failures.
func genTests(size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		if i%5000 == 4999 {
			fmt.Fprintf(&b, "tests/test_mod%d.py::test_case_%d FAILED\n    assert compute(%d) == %d\nE   AssertionError: expected %d\n", i/100, i, i, i+1, i+1)
			continue
		}
		fmt.Fprintf(&b, "tests/test_mod%d.py::test_case_%d PASSED\n", i/100, i)
	}
	b.WriteString("==== 20 failed, 99980 passed in 81.20s ====\n")
	return []byte(b.String())
}

// BenchmarkPytestShortLines is the tests reducer on 16 MiB of short lines, a long pytest -v run:
// every line goes through its noise and rule tests, so their constant decides the time.
func BenchmarkPytestShortLines(b *testing.B) {
	in := Input{Command: "python -m pytest -v", ExitCode: 1, Output: genTests(16 << 20)}
	b.SetBytes(int64(len(in.Output)))
	b.ReportAllocs()
	for b.Loop() {
		Compact(in)
	}
}
