// Package benchtest holds what the benchmarks of several packages share: the CPU time of an
// operation, steadier than its wall time on a shared machine, and the catalogs they measure on.
package benchtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// LoopCPU runs op in b.Loop, reporting allocations and the CPU time per operation as
// cpu-ns/op.
func LoopCPU(b *testing.B, op func()) {
	b.ReportAllocs()
	start := CPUTime()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(CPUTime()-start)/float64(b.N), "cpu-ns/op")
}

var idKey = regexp.MustCompile(`"(id|name)":\s*"`)

// CatalogFile is a catalog file of n lines: the tools of the retrieval sets (Seal-Tools, then
// MetaTool), repeated under new ids and names ("copy1_…") past their 4,275 lines. A catalog of
// 10,000 distinct real tools is not to be had; the repeats are why a benchmark must not cache
// the analysis of whole identical texts.
func CatalogFile(tb testing.TB, n int) []byte {
	tb.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("benchtest: no source location")
	}
	root := filepath.Join(filepath.Dir(here), "..", "..", "testdata", "bench", "retrieval")
	var lines [][]byte
	for _, set := range []string{"sealtools", "metatool"} {
		data, err := os.ReadFile(filepath.Join(root, set, "tools.jsonl"))
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
		if err := sc.Err(); err != nil {
			tb.Fatal(err)
		}
	}
	var out bytes.Buffer
	for i := range n {
		l := lines[i%len(lines)]
		if i >= len(lines) {
			l = idKey.ReplaceAll(l, fmt.Appendf(nil, `"$1": "copy%d_`, i/len(lines)))
		}
		out.Write(l)
		out.WriteByte('\n')
	}
	return out.Bytes()
}
