//go:build unix

package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inputCatalog is a catalog of two tools for the input tests.
const inputCatalog = `{"id":"mcp:github:create_issue","name":"mcp__github__create_issue","description":"Create an issue","server":"github","mcp_tool_name":"create_issue"}
{"id":"mcp:github:get_issue","name":"mcp__github__get_issue","description":"Get an issue","server":"github","mcp_tool_name":"get_issue"}
`

// runInput runs the binary in work with stdin and the descriptors extra (3 on), failing the test (rather than hanging it) when the
// command has not ended by a deadline, which is not a measurement. It returns the exit code, stdout
// and stderr.
func runInput(t *testing.T, work string, stdin *os.File, extra []*os.File, argv ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, argv...)
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + work, "NODMIX_HOME=" + filepath.Join(work, ".nodmix"), "PATH=" + os.Getenv("PATH")}
	if stdin != nil {
		cmd.Stdin = stdin
	}
	cmd.ExtraFiles = extra
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("nodmix %s did not end within 30s (waiting on a named pipe?):\n%s", strings.Join(argv, " "), errb.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("nodmix %s: %v", strings.Join(argv, " "), err)
	return 0, "", ""
}

// TestCatalogInputRefusesNamedPipeLink: a symbolic link to a named pipe given as --catalog,
// --tools or --queries fails at once, saying what to do, where the open waited for a writer
// forever (the path was checked without following the link).
func TestCatalogInputRefusesNamedPipeLink(t *testing.T) {
	work := t.TempDir()
	fifo, link := filepath.Join(work, "fifo"), filepath.Join(work, "catalog.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(work, "tools.jsonl")
	if err := os.WriteFile(tools, []byte(inputCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"tools", "list", "--catalog", link},
		{"tools", "search", "issue", "--catalog", link},
		{"tools", "exposure", "--catalog", link},
		{"search", "eval", "--tools", link, "--queries", tools},
		{"search", "eval", "--tools", tools, "--queries", link},
	} {
		code, _, stderr := runInput(t, work, nil, nil, argv...)
		want := "nodmix: " + link + ": is a named pipe, which nodmix does not wait on for a writer: pipe the file to stdin and give it as -\n"
		if code != 1 || stderr != want {
			t.Errorf("nodmix %s: exit %d, stderr %q; want 1, %q", strings.Join(argv, " "), code, stderr, want)
		}
	}
}

// TestCatalogInputFromStdin: a catalog piped in is read as --catalog - and as --catalog
// /dev/stdin (the pipe is the process's stdin, not a named pipe to wait on), and so is one
// redirected from a file, or piped on another descriptor the process starts with, as a shell's
// process substitution (--catalog <(cmd)) gives it.
func TestCatalogInputFromStdin(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "catalog.jsonl")
	if err := os.WriteFile(file, []byte(inputCatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	piped := func() *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		// The catalog fits in the pipe's buffer: nothing waits for the reader.
		if _, err := w.WriteString(inputCatalog); err != nil {
			t.Fatal(err)
		}
		w.Close()
		return r
	}
	redirected := func() *os.File {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	none := func() *os.File { return nil }
	for _, tc := range []struct {
		name         string
		stdin, extra func() *os.File
		path         string
	}{
		{"piped, -", piped, none, "-"},
		{"piped, /dev/stdin", piped, none, "/dev/stdin"},
		{"redirected, -", redirected, none, "-"},
		{"redirected, /dev/stdin", redirected, none, "/dev/stdin"},
		{"piped on descriptor 3", none, piped, "/dev/fd/3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var extra []*os.File
			if f := tc.extra(); f != nil {
				extra = []*os.File{f}
			}
			code, stdout, stderr := runInput(t, work, tc.stdin(), extra, "tools", "search", "create issue", "--catalog", tc.path, "--limit", "1", "--json")
			if code != 0 || !strings.Contains(stdout, `"mcp__github__create_issue"`) {
				t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		})
	}
}
