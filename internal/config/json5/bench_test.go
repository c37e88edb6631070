package json5

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParse parses the realistic config file of the parent package.
func BenchmarkParse(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("..", "testdata", "realistic.json5"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSet inserts a nested member into the same file.
func BenchmarkSet(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("..", "testdata", "realistic.json5"))
	if err != nil {
		b.Fatal(err)
	}
	path := []string{"plugins", "entries", "extra", "config", "enabled"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Set(src, path, []byte("true")); err != nil {
			b.Fatal(err)
		}
	}
}
