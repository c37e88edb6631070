//go:build unix

package sqlite

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

// state.db holds transcripts, and with them whatever tools printed (an exec of `cat .env`): like
// the config file and the session logs, it and its WAL files are the user's alone, even in a
// state directory others may read.
func TestNewStoreFilesAreTheUsers(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(context.Background(), "k", 0, sessiontest.Transcript()); err != nil {
		t.Fatal(err)
	}
	got := map[string]fs.FileMode{}
	for _, name := range []string{"state.db", "state.db-wal", "state.db-shm"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = fi.Mode().Perm()
	}
	want := map[string]fs.FileMode{"state.db": 0o600, "state.db-wal": 0o600, "state.db-shm": 0o600}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("file modes (-want +got):\n%s", diff)
	}
}
