//go:build unix

package regular

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs fn, failing the test if it has not returned by a generous deadline (a deadline,
// not a measurement). An open stuck on the named pipe fifo is released by opening the pipe's
// other end, so that fn's goroutine always ends before the test does.
func within(t *testing.T, fifo string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
		return
	case <-time.After(10 * time.Second):
	}
	t.Errorf("still waiting after 10s: opening the named pipe %s blocks", fifo)
	for {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		select {
		case <-done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// specialFiles makes a regular file, a named pipe, links to both and a directory in a
// temporary directory.
func specialFiles(t *testing.T) (dir, file, fifo, fileLink, fifoLink string) {
	t.Helper()
	dir = t.TempDir()
	file, fifo = filepath.Join(dir, "file"), filepath.Join(dir, "fifo")
	if err := os.WriteFile(file, []byte("text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	fileLink, fifoLink = filepath.Join(dir, "file-link"), filepath.Join(dir, "fifo-link")
	for link, to := range map[string]string{fileLink: file, fifoLink: fifo} {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	return dir, file, fifo, fileLink, fifoLink
}

// TestOpen: a regular file, or a link to one, is opened; a named pipe, a link to one, a
// directory or a device is refused at once, saying what it is, where opening the pipe waited for
// a writer.
func TestOpen(t *testing.T) {
	dir, file, fifo, fileLink, fifoLink := specialFiles(t)
	for _, tc := range []struct{ path, kind string }{
		{file, ""},
		{fileLink, ""},
		{fifo, "a named pipe"},
		{fifoLink, "a named pipe"},
		{dir, "a directory"},
		{"/dev/null", "a device"}, // opened for reading only
	} {
		var f *os.File
		var err error
		within(t, fifo, func() { f, _, err = Open(tc.path) })
		if tc.kind == "" {
			if err != nil {
				t.Errorf("Open(%s): %v", tc.path, err)
				continue
			}
			b, err := io.ReadAll(f)
			f.Close()
			if err != nil || string(b) != "text\n" {
				t.Errorf("Open(%s) read %q, %v", tc.path, b, err)
			}
			continue
		}
		var nr *Error
		if f != nil || !errors.As(err, &nr) || !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open(%s) = %v, %v; want an *Error", tc.path, f, err)
			continue
		}
		if want := tc.path + ": not a regular file (it is " + tc.kind + ")"; err.Error() != want {
			t.Errorf("Open(%s) error %q, want %q", tc.path, err, want)
		}
	}
	if _, _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want fs.ErrNotExist", err)
	}
}

// pipe is the reading end of a pipe holding text, whose writing end is closed.
func pipe(t *testing.T, text string) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	// The text fits in the pipe's buffer: nothing waits for the reader.
	if _, err := w.WriteString(text); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return r
}

// TestOpenInput: "-" and a path naming the file that is stdin (a pipe, as /dev/stdin names it
// when a catalog is piped in) read stdin, and /dev/fd/N reads a pipe the process holds (as a
// shell's process substitution names it); a named pipe is refused at once, as Open refuses it.
func TestOpenInput(t *testing.T) {
	dir, file, fifo, _, fifoLink := specialFiles(t)
	const (
		self     = "/dev/fd/N of the pipe stdin is"
		selfLink = "a link to /dev/fd/N, as /dev/stdin is"
	)
	for _, tc := range []struct {
		name, path string
		stdin      string // "pipe", "other pipe" (the path's pipe is not stdin) or "memory"
		want       string // what is read, or the error ("%s" is the path)
	}{
		{"dash", "-", "pipe", "piped\n"},
		{"dash, stdin not a file", "-", "memory", "memory\n"},
		{"a regular file", file, "pipe", "text\n"},
		{"stdin by its descriptor", self, "pipe", "piped\n"},
		{"stdin by a link", selfLink, "pipe", "piped\n"},
		{"a descriptor the process holds", self, "other pipe", "piped\n"},
		{"a descriptor, stdin not a file", self, "memory", "piped\n"},
		{"a link to a descriptor that is not stdin", selfLink, "other pipe", "%s: not a regular file (it is a named pipe)"},
		{"a named pipe", fifo, "pipe", "%s: not a regular file (it is a named pipe)"},
		{"a link to a named pipe", fifoLink, "pipe", "%s: not a regular file (it is a named pipe)"},
		{"a directory", dir, "pipe", "%s: not a regular file (it is a directory)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := pipe(t, "piped\n")
			path := tc.path
			switch fd := "/dev/fd/" + strconv.Itoa(int(r.Fd())); path {
			case self, selfLink:
				if _, err := os.Stat(fd); err != nil {
					t.Skipf("no %s: %v", fd, err)
				}
				if path = fd; tc.path == selfLink {
					path = filepath.Join(t.TempDir(), "stdin")
					if err := os.Symlink(fd, path); err != nil {
						t.Fatal(err)
					}
				}
			}
			var stdin io.Reader = r
			switch tc.stdin {
			case "other pipe":
				stdin = pipe(t, "other\n")
			case "memory":
				stdin = strings.NewReader("memory\n")
			}
			var in io.Reader
			var closeIn func() error
			var err error
			within(t, fifo, func() { in, closeIn, err = OpenInput(path, stdin) })
			if err != nil {
				if want := strings.ReplaceAll(tc.want, "%s", path); !errors.Is(err, ErrNotRegular) || err.Error() != want {
					t.Errorf("OpenInput(%s): %v, want %q", path, err, want)
				}
				return
			}
			defer closeIn()
			b, err := io.ReadAll(in)
			if err != nil || string(b) != tc.want {
				t.Errorf("OpenInput(%s) read %q, %v; want %q", path, b, err, tc.want)
			}
		})
	}
}
