package json5

import (
	"fmt"
	"strings"
	"testing"
)

// dupObject is an object holding n members named k (and a few others), one a line, the
// shape a generated or repeatedly appended config file takes.
func dupObject(n int) []byte {
	var b strings.Builder
	b.WriteString("{\n  tools: {\n    keep: 1,\n")
	for i := range n {
		fmt.Fprintf(&b, "    k: %d, // copy %d\n", i, i)
	}
	b.WriteString("    last: true,\n  },\n}\n")
	return []byte(b.String())
}

// BenchmarkUnsetDuplicates removes every one of n duplicates of a key from one object: the
// cost per duplicate stays flat as n grows (it used to re-parse and copy the whole file for
// each duplicate removed, so the total grew with n²).
func BenchmarkUnsetDuplicates(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		src := dupObject(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Unset(src, []string{"tools", "k"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
