package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchHook: Env.Batch is called for the commands that read, answer and exit, before they
// run, and never for servers, agent turns or tool calls, nor for a command line that names no
// command.
func TestBatchHook(t *testing.T) {
	home := t.TempDir()
	cat := filepath.Join("..", "..", "examples", "catalog.jsonl")
	for _, tc := range []struct {
		args  []string
		batch bool
	}{
		{[]string{"tools", "search", "github issue", "--catalog", cat}, true},
		{[]string{"tools", "list", "--catalog", cat, "--json"}, true},
		{[]string{"--verbose", "tools", "exposure", "--catalog", cat}, true},
		{[]string{"tools", "call", "nope", "--args", "{}", "--catalog", cat}, false},
		{[]string{"gateway", "--frobnicate"}, false},
		{[]string{"mcp", "serve", "--frobnicate"}, false},
		{[]string{"agent", "--frobnicate"}, false},
		{[]string{"version"}, false},
		{[]string{"no-such-command"}, false},
		{nil, false},
	} {
		called := 0
		var out, errb bytes.Buffer
		env := map[string]string{"HOME": home, "NODMIX_HOME": filepath.Join(home, ".nodmix")}
		Execute(context.Background(), Env{Args: tc.args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv: func(k string) string { return env[k] }, Batch: func() { called++ }})
		if want := map[bool]int{true: 1, false: 0}[tc.batch]; called != want {
			t.Errorf("%q: Batch called %d times, want %d (stderr %s)", tc.args, called, want, errb.String())
		}
	}
}

// TestToolsCallArgsDepth: --args nested past what encoding/json decodes is refused for its depth,
// not as "not a JSON object", and exits 2 like every usage error.
func TestToolsCallArgsDepth(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "NODMIX_HOME": filepath.Join(home, ".nodmix")}
	deep := `{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
	var out, errb bytes.Buffer
	code := Execute(context.Background(), Env{Args: []string{"tools", "call", "nodmix:core:exec", "--args", deep},
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }})
	if want := "--args: nests arrays and objects deeper than 10000 levels"; code != 2 || !strings.Contains(errb.String(), want) {
		t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errb.String(), want)
	}
}
