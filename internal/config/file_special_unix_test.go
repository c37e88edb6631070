//go:build unix

package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs fn and fails the test if it has not returned by a generous deadline. A call stuck
// opening the named pipe fifo is released by opening the pipe's other end, so that fn's
// goroutine always ends before the test does.
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

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

// TestLoadRefusesNonRegularFile: a config path naming a named pipe, a directory or a device is
// refused at once with an error naming the path and the rule, instead of waiting forever for a
// writer to the pipe; a link to such a file is refused the same way.
func TestLoadRefusesNonRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "fifo.json5"))
	link := filepath.Join(dir, "link.json5")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, what string }{
		{fifo, "a named pipe"},
		{link, "a named pipe"},
		{dir, "a directory"},
		{"/dev/null", "a device"}, // read only: nothing here writes it
	} {
		var f *File
		var err error
		within(t, fifo, func() { f, err = Load(tc.path) })
		if f != nil || !errors.Is(err, ErrNotRegular) {
			t.Errorf("Load(%s) = %v, %v; want ErrNotRegular", tc.path, f, err)
			continue
		}
		if want := `config file "` + tc.path + `": not a regular file (it is ` + tc.what + `)`; err.Error() != want {
			t.Errorf("Load(%s) error %q, want %q", tc.path, err, want)
		}
	}
}

// TestSaveRefusesNonRegularFile: a config file that was missing when loaded and is a named pipe
// or a directory when saved is refused without blocking, and nothing is renamed over it.
func TestSaveRefusesNonRegularFile(t *testing.T) {
	for _, kind := range []string{"fifo", "dir"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "nodmix.json5")
			f, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Set("tools.discoveryMode", []byte(`"all"`)); err != nil {
				t.Fatal(err)
			}
			if kind == "fifo" {
				mkfifo(t, path)
			} else if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			within(t, path, func() { err = f.Save() })
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path) {
				t.Errorf("Save = %v, want ErrNotRegular naming %s", err, path)
			}
			if fi, err := os.Lstat(path); err != nil || fi.Mode().IsRegular() {
				t.Errorf("the %s was replaced: %v, %v", kind, fi.Mode(), err)
			}
		})
	}
}

// TestLoadThroughSymlinkKeepsMode: a link to a regular file is read through, and the mode kept
// is the file's, from the file that was opened.
func TestLoadThroughSymlinkKeepsMode(t *testing.T) {
	real := writeFile(t, `{tools: {discoveryMode: "all"}}`, 0o640)
	link := filepath.Join(t.TempDir(), "link.json5")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	f, err := Load(link)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Config().Tools.DiscoveryMode; got != "all" {
		t.Errorf("DiscoveryMode = %q, want all", got)
	}
	if err := f.Set("tools.discoveryMode", []byte(`"auto"`)); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(real); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after save: %v, %v; want 0640", fi.Mode(), err)
	}
}

// TestSecretFileMustBeRegular: a {"$file": …} secret naming a named pipe or a directory is
// refused when it is resolved, instead of waiting forever for the pipe's writer.
func TestSecretFileMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "key.fifo"))
	for _, name := range []string{fifo, dir} {
		var s Secret
		if err := s.UnmarshalJSON([]byte(`{"$file":` + quoteJSON(name) + `}`)); err != nil {
			t.Fatal(err)
		}
		var err error
		within(t, fifo, func() { _, err = s.Resolve(func(string) (string, bool) { return "", false }) })
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want one naming the path and wrapping ErrNotRegular", name, err)
		}
	}
}

func quoteJSON(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
