package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// promptWatcher is a goroutine-safe stdout that says when a text has been written.
type promptWatcher struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *promptWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.seen != nil && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

// TestConfigureInterruptedAtPromptWritesNothing: Ctrl-C (the command's context ends) at a
// prompt of `nodmix configure` ends the command, and what is typed afterwards, believing the
// command gone, is not taken as the answer and written to the config file.
func TestConfigureInterruptedAtPromptWritesNothing(t *testing.T) {
	for _, tc := range []struct{ name, prompt string }{
		{"provider", "Web search provider [tavily]: "},
		{"key", "Tavily API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), ".nodmix")
			env := map[string]string{"NODMIX_HOME": home}
			stdin, typing := io.Pipe()
			out := &promptWatcher{want: tc.prompt, seen: make(chan struct{})}
			seen := out.seen
			args := []string{"configure", "--section", "web"}
			if tc.name == "key" {
				args = append(args, "--provider", "tavily")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var errb bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- Execute(ctx, Env{Args: args, Stdin: stdin, Stdout: out, Stderr: &errb,
					Getenv: func(k string) string { return env[k] }})
			}()
			<-seen
			cancel()
			// The person, taking the command for ended, types on.
			wrote := make(chan struct{})
			go func() {
				defer close(wrote)
				_, _ = typing.Write([]byte("tavily\nrm -rf build\n"))
			}()
			code := <-done
			_ = stdin.Close()
			<-wrote
			if code != ExitFailure {
				t.Errorf("exit code %d, want %d (stderr %q)", code, ExitFailure, errb.String())
			}
			if data, err := os.ReadFile(filepath.Join(home, "nodmix.json5")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the config file was written after the interrupt:\n%s", data)
			}
		})
	}
}
