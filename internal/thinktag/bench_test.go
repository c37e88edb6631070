package thinktag

import (
	"fmt"
	"strings"
	"testing"
)

// benchReply builds a reply of about size bytes the way local models write them: a reasoning
// block, then Markdown with paragraphs, inline code, lists and fenced code that shows a tag.
func benchReply(size int) string {
	var b strings.Builder
	b.WriteString("<think>\n")
	for i := 0; b.Len() < size/6; i++ {
		fmt.Fprintf(&b, "Step %d: the user wants the config loader to accept `include` paths; check how the resolver treats relative ones.\n", i)
	}
	b.WriteString("</think>\n\nHere is what changes.\n\n")
	for i := 0; b.Len() < size; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "The loader reads `%s.yaml` first, then merges ``overrides`` in order; a model that prints `<think>` in a code span keeps it.\n\n", "part")
		case 1:
			b.WriteString("- first, resolve the path against the including file\n- then, reject cycles with `ErrCycle`\n- finally, merge\n\n")
		case 2:
			b.WriteString("```go\nfunc load(p string) (*Config, error) {\n\t// <think> in code is content\n\treturn parse(p)\n}\n```\n\n")
		default:
			b.WriteString("A closing tag without an opening one, like </think>, stays visible; so does a < b.\n\n")
		}
	}
	return b.String()
}

// deltas cuts s into pieces of n bytes, as a provider stream delivers it.
func deltas(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// BenchmarkFilter streams a 20 KB reply in 16-byte deltas, the answer path of every local-model turn.
func BenchmarkFilter(b *testing.B) {
	reply := benchReply(20 << 10)
	pieces := deltas(reply, 16)
	want, _ := Split(reply)
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		var f Filter
		n := 0
		for _, p := range pieces {
			n += len(f.Write(p))
		}
		n += len(f.Close())
		if n != len(want) {
			b.Fatalf("visible %d bytes, want %d", n, len(want))
		}
	}
}

func BenchmarkSplit(b *testing.B) {
	reply := benchReply(20 << 10)
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		Split(reply)
	}
}

// BenchmarkFilterAdversarial streams a paragraph in which every tag follows a backtick run with no
// partner: runs of ever longer backticks, each followed by a reasoning block. Read naively, each
// tag would look ahead to the paragraph's end; the paragraph memo keeps it linear.
func BenchmarkFilterAdversarial(b *testing.B) {
	var sb strings.Builder
	for n := 1; sb.Len() < 20<<10; n++ {
		sb.WriteString(strings.Repeat("`", n))
		sb.WriteString(" x <think>y</think> \\`` ")
	}
	reply := sb.String()
	pieces := deltas(reply, 16)
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		var f Filter
		for _, p := range pieces {
			f.Write(p)
		}
		f.Close()
	}
}

// manyRunLengths is a paragraph that opens with runs of n+1 … 2n backticks, none closed, so that
// n lengths are pending, then tags and runs of one backtick up to size bytes: every run asks
// whether its length is pending. With the lengths searched one by one that cost n per run, about
// the square root of the reply's length (4 MB took over two seconds); indexed, it is linear.
func manyRunLengths(size int) string {
	n := 1
	for 3*n*n/2 < size/2 {
		n++
	}
	var b strings.Builder
	for l := n + 1; l <= 2*n; l++ {
		b.WriteString(strings.Repeat("`", l))
		b.WriteString("a")
	}
	for k := 0; b.Len() < size; k++ {
		if k%64 == 0 {
			b.WriteString("<think>b</think>")
		}
		b.WriteString("`a")
	}
	return b.String()
}

// BenchmarkFilterManyRunLengths streams a megabyte of manyRunLengths in 64-byte deltas (about
// 0.2 s an operation when pending lengths were searched one by one).
func BenchmarkFilterManyRunLengths(b *testing.B) {
	reply := manyRunLengths(1 << 20)
	pieces := deltas(reply, 64)
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		var f Filter
		for _, p := range pieces {
			f.Write(p)
		}
		f.Close()
	}
}
