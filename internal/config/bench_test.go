package config

import (
	"os"
	"testing"
)

// BenchmarkLoad reads, parses and validates a realistic config file (five MCP servers, two
// plugins, hooks, agents; about 2.7 KB).
func BenchmarkLoad(b *testing.B) {
	path := writeRealistic(b)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSet is one `config set` edit of the realistic file: edit, re-parse, re-validate.
func BenchmarkSet(b *testing.B) {
	f, err := Load(writeRealistic(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Set("plugins.entries.tokenjuice.enabled", []byte("false")); err != nil {
			b.Fatal(err)
		}
	}
}
