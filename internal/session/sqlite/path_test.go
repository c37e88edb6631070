package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

// A state directory may be named anything: the store must be the file at the path given, in WAL
// mode, whatever characters SQLite's URI syntax gives a meaning to.
func TestOpenPathsWithURICharacters(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ dir, prefix string }{
		{"a%41b", ""}, {"x#y", ""}, {"q?r=1&s", ""}, {"sp ace", ""}, {"%", ""},
		{"plain", "/"}, // a leading "//" is a path too, not a host
	} {
		dir := c.dir
		t.Run(dir, func(t *testing.T) {
			parent := t.TempDir()
			path := filepath.Join(parent, dir, "state.db")
			s, err := Open(ctx, c.prefix+path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Append(ctx, "k", 0, sessiontest.Transcript()); err != nil {
				t.Fatal(err)
			}
			var file, mode string
			if err := s.db.QueryRowContext(ctx, `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
				t.Fatal(err)
			}
			if err := s.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if file != path || mode != "wal" {
				t.Errorf("store file %q in journal mode %q, want %q in wal", file, mode, path)
			}
			var names []string
			ents, _ := os.ReadDir(parent)
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if diff := cmp.Diff([]string{dir}, names); diff != "" {
				t.Errorf("files beside the state directory (-want +got):\n%s", diff)
			}
			again, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if got, err := again.Transcript(ctx, "k"); err != nil || !cmp.Equal(sessiontest.Transcript(), got) {
				t.Errorf("after reopening: %d messages, %v", len(got), err)
			}
		})
	}
}
