package config

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoad reads, parses and validates a realistic config file (five MCP servers, two
// plugins, hooks, agents; about 3.5 KB).
func BenchmarkLoad(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "realistic.json5"))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "nodmix.json5")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSet is one `config set` edit of the realistic file: edit, re-parse, re-validate.
func BenchmarkSet(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "realistic.json5"))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "nodmix.json5")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	f, err := Load(path)
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
