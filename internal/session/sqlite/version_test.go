package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

// newerFile writes a state.db as a nodmix of a later schema version might: this build's tables
// with a session in them, one more table, and its version, in the journal mode given.
func newerFile(t *testing.T, journal string) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "kept", 0, sessiontest.Transcript()); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE later (x TEXT)`,
		`PRAGMA user_version = 7`,
		`PRAGMA wal_checkpoint(TRUNCATE)`,
		`PRAGMA journal_mode = ` + journal,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A state.db of a newer nodmix (a downgrade, or an older binary left on the PATH) is refused
// with an error naming the file and the versions, and not one byte of it changes: no journal
// mode switch, no table created, no version written down.
func TestOpenRefusesANewerFile(t *testing.T) {
	ctx := context.Background()
	for _, journal := range []string{"delete", "wal"} {
		t.Run(journal, func(t *testing.T) {
			path := newerFile(t, journal)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(ctx, path)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted a file of a newer schema version")
			}
			if !errors.Is(err, ErrNewerSchema) {
				t.Errorf("error %q does not match ErrNewerSchema", err)
			}
			for _, want := range []string{path, "version 7", "knows " + strconv.Itoa(SchemaVersion)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the refused file changed")
			}
			// And it still holds what the newer nodmix wrote.
			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var mode string
			var v, n int
			if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != journal {
				t.Errorf("journal mode %q, %v; want %q", mode, err, journal)
			}
			if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != 7 {
				t.Errorf("user_version %d, %v; want 7", v, err)
			}
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE session = 'kept'`).Scan(&n); err != nil || n != len(sessiontest.Transcript()) {
				t.Errorf("messages of the kept session: %d, %v", n, err)
			}
		})
	}
}

// Every file Open keeps is at SchemaVersion: a new one, and an older one once migrated, so that
// a later build knows where to migrate from.
func TestOpenRecordsTheSchemaVersion(t *testing.T) {
	ctx := context.Background()
	for name, path := range map[string]string{
		"new":   filepath.Join(t.TempDir(), "state.db"),
		"older": writeOld(t),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var v int
			if err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(SchemaVersion, v); diff != "" {
				t.Errorf("user_version (-want +got):\n%s", diff)
			}
		})
	}
}
