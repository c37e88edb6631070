package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const benchCode = `const hits = await nodmix.tools.search("create an issue");
return await nodmix.tools.call(hits[0].id, { repository: "a/b", title: "x" });`

// BenchmarkRunWarm measures the latency of a run (search + call through a trivial bridge) that
// finds the pool refilled, as a model's occasional tool_search_code call does. The refill
// happens with the timer stopped.
func BenchmarkRunWarm(b *testing.B) { benchmarkRun(b, DefaultWarm, true) }

// BenchmarkRunWarmSustained runs back to back, so the refill competes with the runs and some
// runs find the pool drained; warm/op reports the share served warm.
func BenchmarkRunWarmSustained(b *testing.B) { benchmarkRun(b, DefaultWarm, false) }

// BenchmarkRunCold measures the same run with a process start every time.
func BenchmarkRunCold(b *testing.B) { benchmarkRun(b, -1, false) }

// BenchmarkRunColdBinary is BenchmarkRunCold with the children started from the nodmix binary
// named by NODMIX_SANDBOX_BIN (make bench-compare builds it), as in production: its start-up
// includes the initialization of every package the gateway links, which the test binary lacks.
func BenchmarkRunColdBinary(b *testing.B) {
	bin := os.Getenv("NODMIX_SANDBOX_BIN")
	if bin == "" {
		b.Skip("NODMIX_SANDBOX_BIN is not set")
	}
	p, err := NewPool(Options{Command: []string{bin, ChildArg}, Warm: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	benchmarkPool(b, p, false)
}

func benchmarkRun(b *testing.B, warm int, refilled bool) {
	benchmarkPool(b, newTestPool(b, warm), refilled)
}

func benchmarkPool(b *testing.B, p *Pool, refilled bool) {
	ctx := context.Background()
	if err := p.Available(ctx); err != nil {
		b.Fatal(err)
	}
	br := &fakeBridge{}
	warmRuns := 0
	b.ReportAllocs()
	start := cpuTimes()
	for b.Loop() {
		if refilled {
			b.StopTimer()
			for len(p.idle) < cap(p.idle) {
				time.Sleep(time.Millisecond)
			}
			b.StartTimer()
		}
		res, err := p.Run(ctx, benchCode, br, Limits{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Warm {
			warmRuns++
		}
	}
	end := cpuTimes()
	b.ReportMetric(float64(warmRuns)/float64(b.N), "warm/op")
	// CPU time, steadier than wall time on a shared machine: the host's, and its children's
	// (counted once they are reaped, which the pool does right after each run).
	b.ReportMetric(float64(end[0]-start[0])/float64(b.N), "host-cpu-ns/op")
	b.ReportMetric(float64(end[1]-start[1])/float64(b.N), "child-cpu-ns/op")
}

// cpuTimes returns the CPU time, user and system, of this process and of its reaped children.
func cpuTimes() [2]time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	return [2]time.Duration{
		time.Duration(self.Utime.Nano() + self.Stime.Nano()),
		time.Duration(kids.Utime.Nano() + kids.Stime.Nano()),
	}
}

// BenchmarkNewRuntime is the in-child share of a run's setup: a fresh, locked-down runtime.
func BenchmarkNewRuntime(b *testing.B) {
	for b.Loop() {
		if _, err := newJSRuntime(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNodePermissionStart is the reference's per-call cost floor for comparison: starting
// Node with its permission model and doing nothing.
func BenchmarkNodePermissionStart(b *testing.B) {
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not on PATH")
	}
	// Node 20 spells the flag --experimental-permission; 22 and later, --permission.
	flag := ""
	for _, f := range []string{"--permission", "--experimental-permission"} {
		if exec.Command(node, f, "-e", "0").Run() == nil {
			flag = f
			break
		}
	}
	if flag == "" {
		b.Skip("node has no permission model")
	}
	for b.Loop() {
		if out, err := exec.Command(node, flag, "-e", "0").CombinedOutput(); err != nil {
			b.Fatalf("node %s: %v: %s", flag, err, out)
		}
	}
}

// BenchmarkProcessStart is the floor under a cold child: starting a process that does nothing,
// a C one (true) and a static Go one built for the benchmark, and the least a goja child can be
// (testdata/gojafloor: a static Go binary that makes one goja runtime and runs one statement),
// against which RunCold's start of a child that also builds its locked-down runtime, speaks the
// protocol and runs code is to be read.
func BenchmarkProcessStart(b *testing.B) {
	trueBin, err := exec.LookPath("true")
	if err != nil {
		b.Skip("true is not on PATH")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("go is not on PATH")
	}
	dir := b.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	hello := filepath.Join(dir, "nothing")
	build := exec.Command(goBin, "build", "-o", hello, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v: %s", err, out)
	}
	floor := filepath.Join(dir, "gojafloor")
	build = exec.Command(goBin, "build", "-trimpath", "-o", floor, "./testdata/gojafloor")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build gojafloor: %v: %s", err, out)
	}
	for _, tc := range []struct{ name, bin string }{{"true", trueBin}, {"go", hello}, {"goja", floor}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if out, err := exec.Command(tc.bin).CombinedOutput(); err != nil {
					b.Fatalf("%s: %v: %s", tc.bin, err, out)
				}
			}
		})
	}
}
