package telemetry

import (
	"regexp"
	"strings"
	"testing"
)

// safePattern is the rule safeSession writes out as a loop.
var safePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,80}$`)

func safeByPattern(s string) bool { return safePattern.MatchString(s) && s != "." && s != ".." }

func TestSafeSession(t *testing.T) {
	for _, s := range []string{"", ".", "..", "...", "a", "ok-id_1.2", "a b", "a/b", `a\b`, "é", "a\x00",
		strings.Repeat("x", 80), strings.Repeat("x", 81), "Z9", "-", "_"} {
		if got, want := safeSession(s), safeByPattern(s); got != want {
			t.Errorf("safeSession(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzSafeSession holds the loop to the expression it replaces.
func FuzzSafeSession(f *testing.F) {
	for _, s := range []string{"", ".", "..", "ok-id_1.2", "../x", strings.Repeat("y", 81), "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := safeSession(s), safeByPattern(s); got != want {
			t.Fatalf("safeSession(%q) = %v, want %v", s, got, want)
		}
	})
}
