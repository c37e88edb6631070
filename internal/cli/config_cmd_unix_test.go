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

// TestConfigCommandsRefuseNamedPipe: with NODMIX_CONFIG naming a named pipe, every command that
// reads or edits the config file fails at once with an error naming the path and the rule,
// where it used to wait forever for a writer to the pipe (SIGTERM did not end it). The scripts
// cannot make a pipe, so this runs the commands in the process.
func TestConfigCommandsRefuseNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "nodmix.json5")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	env := map[string]string{"NODMIX_CONFIG": fifo, "HOME": t.TempDir()}
	for _, args := range [][]string{
		{"config", "get", "tools"},
		{"config", "validate"},
		{"config", "set", "tools.discoveryMode", "all"},
		{"config", "unset", "tools.discoveryMode"},
		{"configure", "--section", "web", "--provider", "tavily", "--non-interactive", "--api-key-env", "TAVILY_KEY"},
		{"plugins", "enable", "tokenjuice"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- Execute(context.Background(), Env{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
					Getenv: func(k string) string { return env[k] }})
			}()
			var code int
			select {
			case code = <-done:
			case <-time.After(10 * time.Second):
				t.Errorf("%v still waiting after 10s on the named pipe", args)
				code = release(fifo, done)
			}
			if code != ExitFailure {
				t.Errorf("%v: exit code %d, want %d", args, code, ExitFailure)
			}
			if want := `config file "` + fifo + `": not a regular file (it is a named pipe)`; !strings.Contains(errb.String(), want) {
				t.Errorf("%v: stderr %q, want it to say %q", args, errb.String(), want)
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("%v: the pipe was replaced: %v, %v", args, fi.Mode(), err)
			}
		})
	}
}

// release opens the pipe's writing end until the command blocked on opening it for reading
// returns, and gives its exit code: the test waits for the goroutine it started.
func release(fifo string, done <-chan int) int {
	for {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		select {
		case code := <-done:
			return code
		case <-time.After(10 * time.Millisecond):
		}
	}
}
