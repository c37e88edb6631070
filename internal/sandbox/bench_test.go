package sandbox

import (
	"context"
	"os/exec"
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

func benchmarkRun(b *testing.B, warm int, refilled bool) {
	p := newTestPool(b, warm)
	ctx := context.Background()
	if err := p.Available(ctx); err != nil {
		b.Fatal(err)
	}
	br := &fakeBridge{}
	warmRuns := 0
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
	b.ReportMetric(float64(warmRuns)/float64(b.N), "warm/op")
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
