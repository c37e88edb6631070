package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

// Two stores on one file are two processes (a gateway and `nodmix agent`): of holders claiming
// one session at once through both, one wins; a release or the end of the holder's process in
// one is seen by the other.
func TestLeaseAcrossStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	stores := make([]*Store, 2)
	for i := range stores {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	const perStore = 8
	holders := make([]session.Holder, 2*perStore)
	errs := make([]error, len(holders))
	var wg sync.WaitGroup
	for i := range holders {
		holders[i] = sessiontest.Self()
		wg.Go(func() { errs[i] = stores[i%2].Lease(ctx, "k", holders[i], time.Hour) })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("holders %d and %d both took the lease", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, session.ErrLeased):
			t.Errorf("holder %d: %v, want ErrLeased", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no holder took the lease")
	}
	other := stores[(winner+1)%2]
	if err := other.Lease(ctx, "k", sessiontest.Self(), time.Hour); !errors.Is(err, session.ErrLeased) {
		t.Errorf("the other store: %v, want ErrLeased", err)
	}
	if err := stores[winner%2].Unlease(ctx, "k", holders[winner].Token); err != nil {
		t.Fatal(err)
	}
	if err := other.Lease(ctx, "k", sessiontest.Self(), time.Hour); err != nil {
		t.Errorf("the other store after the release: %v", err)
	}

	child, kill := sessiontest.Child(t)
	if err := stores[0].Lease(ctx, "c", child, time.Hour); err != nil {
		t.Fatal(err)
	}
	kill()
	if err := stores[1].Lease(ctx, "c", sessiontest.Self(), time.Hour); err != nil {
		t.Errorf("the other store after the holder's process was killed: %v, want the lease taken", err)
	}
}

// writeVersion1 writes a file as the build of schema version 1 left it: the tables without
// leases, no blobs_session index, a session and a blob in it.
func writeVersion1(t *testing.T, extra string) string {
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
	if err := s.PutBlob(ctx, "kept", "raw", []byte("output")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `DROP TABLE leases; DROP INDEX blobs_session; PRAGMA user_version = 1;`+extra); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// objects lists the tables and indexes of the file, by name.
func objects(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT type || ' ' || name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// A file of schema version 1 gains the leases table and the blobs_session index, keeping what
// it holds, also when two processes open it at once.
func TestOpenMigratesVersion1(t *testing.T) {
	ctx := context.Background()
	path := writeVersion1(t, "")
	var wg sync.WaitGroup
	stores := make([]*Store, 2)
	errs := make([]error, 2)
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = Open(ctx, path) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	s := stores[0]
	var v int
	if err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != SchemaVersion {
		t.Errorf("user_version %d, %v; want %d", v, err, SchemaVersion)
	}
	fresh, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if diff := cmp.Diff(objects(t, fresh.db), objects(t, s.db)); diff != "" {
		t.Errorf("tables and indexes of the migrated file (-new file +migrated):\n%s", diff)
	}
	if got, err := s.Transcript(ctx, "kept"); err != nil || !cmp.Equal(got, sessiontest.Transcript()) {
		t.Errorf("the kept transcript: %v", err)
	}
	if b, err := s.Blob(ctx, "raw"); err != nil || string(b) != "output" {
		t.Errorf("the kept blob: %q, %v", b, err)
	}
	if err := s.Lease(ctx, "kept", sessiontest.Self(), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := stores[1].Lease(ctx, "kept", sessiontest.Self(), time.Hour); !errors.Is(err, session.ErrLeased) {
		t.Errorf("the other store: %v, want ErrLeased", err)
	}
}

// The migration is one transaction: when a step fails, the file stays at version 1 with none of
// the steps before it.
func TestFailedMigrationLeavesVersion1(t *testing.T) {
	ctx := context.Background()
	// A view of the index's name makes creating the index fail, after the leases table.
	path := writeVersion1(t, ` CREATE VIEW blobs_session AS SELECT 1;`)
	if s, err := Open(ctx, path); err == nil {
		s.Close()
		t.Fatal("Open migrated a file whose migration must fail")
	} else if !strings.Contains(err.Error(), "schema") {
		t.Errorf("error %q does not say the schema failed", err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != 1 {
		t.Errorf("user_version %d, %v; want 1", v, err)
	}
	for _, o := range objects(t, db) {
		if o == "table leases" {
			t.Error("the failed migration left the leases table")
		}
	}
}

// writeVersion2 writes a file as the build of schema version 2 left it: no sessions_recent
// index, sessions in it.
func writeVersion2(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"older", "newer"} {
		if _, err := s.Append(ctx, k, 0, sessiontest.Transcript()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.ExecContext(ctx, `DROP INDEX sessions_recent; PRAGMA user_version = 2;`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A file of schema version 2 gains the sessions_recent index, keeping its sessions, which the
// paged listing reads in order.
func TestOpenMigratesVersion2(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, writeVersion2(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != SchemaVersion {
		t.Errorf("user_version %d, %v; want %d", v, err, SchemaVersion)
	}
	fresh, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if diff := cmp.Diff(objects(t, fresh.db), objects(t, s.db)); diff != "" {
		t.Errorf("tables and indexes of the migrated file (-new file +migrated):\n%s", diff)
	}
	page, next, err := s.SessionsPage(ctx, session.Cursor{}, 1)
	if err != nil || len(page) != 1 || page[0].Key != "newer" || next.IsZero() {
		t.Fatalf("first page: %v, %v, %v", page, next, err)
	}
	page, next, err = s.SessionsPage(ctx, next, 1)
	if err != nil || len(page) != 1 || page[0].Key != "older" || !next.IsZero() {
		t.Errorf("second page: %v, %v, %v", page, next, err)
	}
}
