package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBadFlagValuesAreUsageErrors: a flag or argument whose value can never be right is a usage
// error (exit 2) naming it, as --mode and --ranker already were; what depends on the config or
// the catalog (an unknown tool, an unknown provider) stays a failure (exit 1).
func TestBadFlagValuesAreUsageErrors(t *testing.T) {
	cat := filepath.Join("..", "..", "examples", "catalog.jsonl")
	long := strings.Repeat("k", 300)
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"tools", "search", "--catalog", cat, "--limit", "0", "github"}, ExitUsage, "--limit"},
		{[]string{"tools", "search", "--catalog", cat, "--limit", "many", "github"}, ExitUsage, "--limit"},
		{[]string{"tools", "search", "--catalog", cat, "  "}, ExitUsage, "QUERY"},
		{[]string{"tools", "call", "nodmix:core:exec", "--args", "[1]"}, ExitUsage, "--args"},
		{[]string{"tools", "call", "nodmix:core:exec", "--args", "null"}, ExitUsage, "--args"},
		{[]string{"agent", "-m", "hi", "--model", "bogus"}, ExitUsage, "--model"},
		{[]string{"agent", "-m", "hi", "--model", "scripted/demo", "--session", long}, ExitUsage, "--session"},
		{[]string{"agent", "-m", "hi", "--model", "scripted/demo", "--session", "a\x01b"}, ExitUsage, "--session"},
		// Failures, not usage errors.
		{[]string{"tools", "describe", "--catalog", cat, "no-such-tool"}, ExitFailure, "unknown tool"},
		{[]string{"agent", "-m", "hi", "--model", "nosuchprovider/m"}, ExitFailure, "unknown provider"},
		// And what is right still runs.
		{[]string{"tools", "search", "--catalog", cat, "--limit", "3", "github"}, ExitOK, ""},
		{[]string{"agent", "-m", "hi", "--model", "scripted/demo"}, ExitOK, ""},
	} {
		_, stderr, code := run(t, t.TempDir(), tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.says) {
			t.Errorf("%q: exit code %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.says)
		}
	}
}
