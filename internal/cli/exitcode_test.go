package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
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
		{[]string{"tools", "search", "x", "--session", "a\x01b"}, ExitUsage, "--session"},
		{[]string{"tools", "call", "exec", "--session", "a\u009bb"}, ExitUsage, "--session"},
		{[]string{"tools", "code", "-e", "return 1", "--session", "a\nb"}, ExitUsage, "--session"},
		{[]string{"config", "get", "tools..allow"}, ExitUsage, "empty segment"},
		{[]string{"config", "set", "", "1"}, ExitUsage, "empty path"},
		{[]string{"config", "unset", "tools.allow[x]"}, ExitUsage, "not an array index"},
		// Failures, not usage errors.
		{[]string{"config", "get", "tools.allow"}, ExitFailure, "not set"},
		{[]string{"config", "set", "tools.allow", "1"}, ExitFailure, "must be an array of strings"},
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

// failingWriter is a stdout that cannot be written, as a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestOutputThatCannotBeWrittenFails: a command whose output could not be written (stdout on a
// full disk) exits 1 and says so, whether it prints text or JSON; it exited 0 with nothing written
// for the commands that print text.
func TestOutputThatCannotBeWrittenFails(t *testing.T) {
	cat := filepath.Join("..", "..", "examples", "catalog.jsonl")
	home := t.TempDir()
	env := map[string]string{"HOME": home, "NODMIX_HOME": filepath.Join(home, ".nodmix")}
	if code := Execute(context.Background(), Env{Args: []string{"config", "set", "gateway.listen", "127.0.0.1:9"},
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }}); code != ExitOK {
		t.Fatalf("config set: exit code %d", code)
	}
	for _, args := range [][]string{
		{"version"},
		{"config", "file"},
		{"config", "get", "gateway.listen"},
		{"sessions", "list"},
		{"tools", "describe", "--catalog", cat, "mcp:github:create_issue"},
		{"tools", "list", "--catalog", cat},
		{"tools", "list", "--catalog", cat, "--json"},
		{"agent", "-m", "hi", "--model", "scripted/demo"},
	} {
		var errb bytes.Buffer
		code := Execute(context.Background(), Env{Args: args, Stdin: strings.NewReader(""), Stdout: failingWriter{}, Stderr: &errb,
			Getenv: func(k string) string { return env[k] }})
		if code != ExitFailure || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%q: exit code %d, stderr %q; want %d and the write error", args, code, errb.String(), ExitFailure)
		}
	}
}

// TestAgentProgressLinesStripTerminalControls: the tool lines `nodmix agent` prints on stderr
// show a model's arguments and a tool's error, neither of which may drive the terminal (a raw
// U+009B in JSON arguments is a CSI).
func TestAgentProgressLinesStripTerminalControls(t *testing.T) {
	msg := `exec {"command": ["/nonexistent-\u001b]0;pwned\u0007-` + "\u009b" + `2J"]}`
	_, stderr, code := run(t, t.TempDir(), "agent", "--model", "scripted/demo", "-m", msg)
	if code != ExitOK || !strings.Contains(stderr, "→ exec") || !strings.Contains(stderr, "✗ exec") {
		t.Fatalf("exit code %d, stderr %q; want 0 and the lines of a failed exec call", code, stderr)
	}
	checkNoControls(t, "stderr", stderr)
}

// TestToolsDescribeStripsTerminalControls: a tool's description and schema come from its
// server; `tools describe` prints them for a person without the controls that would drive the
// terminal, keeping the description's lines.
func TestToolsDescribeStripsTerminalControls(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog.jsonl")
	tool := `{"id":"mcp:evil:x","name":"mcp__evil__x","description":"line one\u001b]0;pwned\u0007\nline two \u009b2J","source":"mcp","server":"evil","mcp_tool_name":"x",` +
		`"input_schema":{"type":"object","properties":{"q":{"type":"string","description":"q` + "\u009b" + `2J"}}}}` + "\n"
	if err := os.WriteFile(cat, []byte(tool), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, dir, "tools", "describe", "--catalog", cat, "mcp:evil:x")
	if code != ExitOK || !strings.Contains(out, "line one") || !strings.Contains(out, "\nline two") {
		t.Fatalf("exit code %d, stdout %q, stderr %q", code, out, stderr)
	}
	checkNoControls(t, "stdout", out)
}

// TestToolListingsStripTerminalControls: a tool id holds its server's name for the tool as sent,
// which `tools list` and `tools describe` print without its control characters.
func TestToolListingsStripTerminalControls(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalog.jsonl")
	tool := `{"id":"mcp:evil:x\u001b]0;pwned\u0007\u009b2J","name":"mcp__evil__x","description":"d","source":"mcp","server":"evil","mcp_tool_name":"x\u001b]0;pwned\u0007\u009b2J",` +
		`"input_schema":{"type":"object"}}` + "\n"
	if err := os.WriteFile(cat, []byte(tool), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"tools", "list", "--catalog", cat},
		{"tools", "describe", "--catalog", cat, "mcp__evil__x"},
	} {
		out, stderr, code := run(t, dir, args...)
		if code != ExitOK || !strings.Contains(out, "mcp:evil:x") {
			t.Fatalf("%q: exit code %d, stdout %q, stderr %q", args, code, out, stderr)
		}
		checkNoControls(t, fmt.Sprintf("%q: stdout", args), out)
	}
}

// checkNoControls fails t if text, what name printed, holds a control character other than a
// newline: one that a terminal would act on.
func checkNoControls(t *testing.T, name, text string) {
	t.Helper()
	for _, r := range text {
		if r != '\n' && unicode.IsControl(r) {
			t.Errorf("%s holds control character %U: %q", name, r, text)
			return
		}
	}
}
