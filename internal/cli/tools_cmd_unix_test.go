//go:build unix

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCatalogNamedPipe: a named pipe given as --catalog (or --tools) is refused at once with an
// error that says what to do, where opening it waited for a writer forever, deaf to SIGINT. A pipe
// on stdin, given as -, is still read.
func TestCatalogNamedPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "catalog.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	env := map[string]string{"HOME": dir, "NODMIX_HOME": filepath.Join(dir, ".nodmix")}
	run := func(stdin *os.File, args ...string) (int, string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- Execute(context.Background(), Env{Args: args, Stdin: stdin, Stdout: &out, Stderr: &errb,
				Getenv: func(k string) string { return env[k] }})
		}()
		select {
		case code := <-done:
			return code, out.String(), errb.String()
		case <-time.After(30 * time.Second): // a deadline, not a measurement
			// Give the open a writer so that the command ends and the test can report it.
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			<-done
			t.Fatalf("%q waited on the named pipe", args)
			return 0, "", ""
		}
	}
	cat := filepath.Join("..", "..", "examples", "catalog.jsonl")
	for _, args := range [][]string{
		{"tools", "list", "--catalog", fifo},
		{"tools", "exposure", "--catalog", fifo},
		{"tools", "search", "github", "--catalog", fifo},
		{"search", "eval", "--tools", fifo, "--queries", fifo},
		{"search", "eval", "--tools", cat, "--queries", fifo},
	} {
		code, _, stderr := run(nil, args...)
		if code == 0 || !strings.Contains(stderr, fifo+": is a named pipe, which nodmix does not wait on for a writer: pipe the file to stdin and give it as -") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The line fits in the pipe's buffer: no writer needs to wait for the reader.
	if _, err := w.WriteString("\xef\xbb\xbf" + `{"id":"a","name":"a"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	code, stdout, stderr := run(r, "tools", "list", "--catalog", "-")
	if code != 0 || !strings.Contains(stdout, "1 tools") {
		t.Errorf("a pipe on stdin: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
