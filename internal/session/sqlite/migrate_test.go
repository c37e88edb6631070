package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

// oldSchema is the file nodmix wrote before sessions held agent runs.
const oldSchema = `
CREATE TABLE selections (session TEXT NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY (session, name));
CREATE INDEX selections_order ON selections(session, seq);
CREATE TABLE sessions (session TEXT PRIMARY KEY, touched INTEGER NOT NULL);
CREATE INDEX sessions_touched ON sessions(touched);
CREATE TABLE blobs (key TEXT PRIMARY KEY, session TEXT NOT NULL, created INTEGER NOT NULL DEFAULT (unixepoch()), data BLOB NOT NULL);
INSERT INTO selections VALUES ('mcp-a', 1, 'x'), ('mcp-a', 2, 'y'), ('mcp-b', 1, 'z');
INSERT INTO sessions VALUES ('mcp-a', unixepoch() - 3600), ('mcp-b', unixepoch() - 7200);
INSERT INTO blobs(key, session, data) VALUES ('h1', 'mcp-a', x'0001');
`

func writeOld(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(oldSchema); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenMigratesAnOlderFile(t *testing.T) {
	ctx := context.Background()
	path := writeOld(t)
	// Two processes opening the old file at once: each adds the columns or finds them added.
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
	var cols []string
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM pragma_table_info('sessions') ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		_ = rows.Scan(&c)
		cols = append(cols, c)
	}
	rows.Close()
	want := []string{"session", "touched", "model", "agent", "overrides", "counters", "length", "created", "updated"}
	if diff := cmp.Diff(want, cols); diff != "" {
		t.Errorf("sessions columns (-want +got):\n%s", diff)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil || n != 2 {
		t.Errorf("rows of the old sessions table: %d, %v; want 2", n, err)
	}
	if got, _ := s.Selected(ctx, "mcp-a"); !cmp.Equal(got, []string{"x", "y"}) {
		t.Errorf("old selections = %v", got)
	}
	if b, err := s.Blob(ctx, "h1"); err != nil || len(b) != 2 {
		t.Errorf("old blob = %v, %v", b, err)
	}
	// Old rows tracked selections only: they are not sessions until a turn writes.
	if all, err := session.AllSessions(ctx, s); err != nil || len(all) != 0 {
		t.Errorf("Sessions = %v, %v", all, err)
	}
	if _, err := s.Session(ctx, "mcp-a"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Session(mcp-a) = %v", err)
	}
	info, err := s.Append(ctx, "mcp-a", 0, sessiontest.Transcript())
	if err != nil {
		t.Fatal(err)
	}
	if info.Messages != len(sessiontest.Transcript()) {
		t.Errorf("append to a migrated row: %+v", info)
	}
	if got, _ := stores[1].Transcript(ctx, "mcp-a"); !cmp.Equal(got, sessiontest.Transcript()) {
		t.Error("the other store does not read the transcript")
	}
	// Opening a migrated file again changes nothing.
	again, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if in, err := again.Session(ctx, "mcp-a"); err != nil || !cmp.Equal(in, info) {
		t.Errorf("after reopening: %+v, %v", in, err)
	}
}

// Switching a file to WAL reads it and then needs its write lock; SQLite refuses that at once,
// busy timeout or not, while another process writes (or opens) a file still in the old journal
// mode. Open waits for the writer instead of failing.
func TestOpenWaitsForAWriterOfAnOlderFile(t *testing.T) {
	ctx := context.Background()
	path := writeOld(t)
	w, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET touched = touched + 1`); err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		s, err := Open(ctx, path)
		if err == nil {
			s.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		t.Fatalf("Open returned while the writer held the file: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open after the writer let go: %v", err)
	}
}

func TestJournalIsWAL(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mode string
	var busy int
	if err := s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
	if err := s.db.QueryRow(`PRAGMA busy_timeout`).Scan(&busy); err != nil || busy < 1000 {
		t.Errorf("busy_timeout = %d, %v", busy, err)
	}
}
