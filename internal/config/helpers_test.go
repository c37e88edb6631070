package config

import (
	"os"
	"path/filepath"
	"testing"
)

// writeFile writes text to a fresh nodmix.json5 with exactly mode and returns its path.
func writeFile(tb testing.TB, text string, mode os.FileMode) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "nodmix.json5")
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		tb.Fatal(err)
	}
	return path
}

// writeRealistic copies testdata/realistic.json5 to a fresh file and returns its path.
func writeRealistic(tb testing.TB) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "realistic.json5"))
	if err != nil {
		tb.Fatal(err)
	}
	return writeFile(tb, string(data), 0o600)
}
