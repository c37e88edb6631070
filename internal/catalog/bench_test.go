package catalog_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/nodmix/nodmix/internal/benchtest"
	"github.com/nodmix/nodmix/internal/catalog"
)

// benchFile is the n-line benchmark catalog file.
func benchFile(b *testing.B, n int) []byte { return benchtest.CatalogFile(b, n) }

// BenchmarkReadFile10000 is loading a 10,000-line catalog file, as `nodmix tools search
// --catalog` does first.
func BenchmarkReadFile10000(b *testing.B) {
	data := benchFile(b, 10000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := benchtest.CPUTime()
	for b.Loop() {
		tools, err := catalog.ReadFile(bytes.NewReader(data))
		if err != nil || len(tools) != 10000 {
			b.Fatal(len(tools), err)
		}
	}
	b.ReportMetric(float64(benchtest.CPUTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSchemaKeys10000 is the schema keys of 10,000 tools, which the discovery index asks
// for every tool of a catalog version.
func BenchmarkSchemaKeys10000(b *testing.B) {
	tools, err := catalog.ReadFile(bytes.NewReader(benchFile(b, 10000)))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	start := benchtest.CPUTime()
	for b.Loop() {
		for i := range tools {
			_ = tools[i].SchemaKeys()
		}
	}
	b.ReportMetric(float64(benchtest.CPUTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSnapshot10000 is the snapshot of a 10,000-tool catalog and the view of it a policy that
// allows everything leaves, as every command with a catalog file builds them.
func BenchmarkSnapshot10000(b *testing.B) {
	tools, err := catalog.ReadFile(bytes.NewReader(benchFile(b, 10000)))
	if err != nil {
		b.Fatal(err)
	}
	entries := make([]catalog.Entry, len(tools))
	for i, t := range tools {
		entries[i] = catalog.Entry{Tool: t}
	}
	b.ReportAllocs()
	start := benchtest.CPUTime()
	for b.Loop() {
		s, err := catalog.NewSnapshot(1, entries)
		if err != nil {
			b.Fatal(err)
		}
		if s.Filter(func(*catalog.Tool) bool { return true }).Len() != len(tools) {
			b.Fatal("filter lost tools")
		}
	}
	b.ReportMetric(float64(benchtest.CPUTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkToolsSearchProcess10000 is `nodmix tools search --catalog` over a 10,000-line file as
// a whole process (start-up, loading, indexing, one query), with the binary NODMIX_BIN names
// (make bench-compare builds it). child-cpu-ns/op is the process's CPU time. "batch" runs it as
// shipped, without garbage collection below its memory limit; "gogc100" with GOGC=100 in its
// environment, which nodmix leaves to the user, so the collector runs as in any Go process.
func BenchmarkToolsSearchProcess10000(b *testing.B) {
	bin := os.Getenv("NODMIX_BIN")
	if bin == "" {
		b.Skip("NODMIX_BIN is not set")
	}
	path := filepath.Join(b.TempDir(), "catalog.jsonl")
	if err := os.WriteFile(path, benchFile(b, 10000), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, env string }{{"batch", ""}, {"gogc100", "GOGC=100"}} {
		b.Run(tc.name, func(b *testing.B) {
			var before syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
			for b.Loop() {
				cmd := exec.Command(bin, "tools", "search", "analyze the evidence of a crime scene", "--catalog", path)
				if tc.env != "" {
					cmd.Env = append(os.Environ(), tc.env)
				}
				out, err := cmd.CombinedOutput()
				if err != nil || !bytes.Contains(out, []byte("analyzeEvidence")) {
					b.Fatalf("%v: %s", err, out)
				}
			}
			var after syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
			used := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
			b.ReportMetric(float64(used)/float64(b.N), "child-cpu-ns/op")
		})
	}
}
