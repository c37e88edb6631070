package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

func TestBlobRetentionDropsOldBlobs(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.db.ExecContext(ctx, `INSERT INTO blobs(key, session, created, data) VALUES ('old', 's', unixepoch() - ?, x'00')`, MaxBlobAge+60); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlob(ctx, "s", "new", []byte("fresh")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Blob(ctx, "old"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a blob older than %d s survived a put: %v", MaxBlobAge, err)
	}
	if b, err := s.Blob(ctx, "new"); err != nil || string(b) != "fresh" {
		t.Errorf("new blob = %q, %v", b, err)
	}
}

func TestSelectionRetentionDropsIdleSessions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, sess := range []string{"idle", "recent"} {
		if _, err := s.AddSelected(ctx, sess, []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE sessions SET touched = unixepoch() - ? WHERE session = 'idle'`, MaxSelectionAge+60); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE sessions SET touched = unixepoch() - ? WHERE session = 'recent'`, MaxSelectionAge-3600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSelected(ctx, "other", []string{"c"}); err != nil {
		t.Fatal(err)
	}
	for sess, want := range map[string]int{"idle": 0, "recent": 2, "other": 1} {
		got, err := s.Selected(ctx, sess)
		if err != nil || len(got) != want {
			t.Errorf("Selected(%q) = %v, %v; want %d names", sess, got, err, want)
		}
	}
	// A session that activates again is young again.
	if _, err := s.AddSelected(ctx, "recent", []string{"d"}); err != nil {
		t.Fatal(err)
	}
	var touched int64
	if err := s.db.QueryRowContext(ctx, `SELECT unixepoch() - touched FROM sessions WHERE session = 'recent'`).Scan(&touched); err != nil || touched > 60 {
		t.Errorf("recent was touched %d s ago (%v), want now", touched, err)
	}
}

// TestSelectionsOfOlderStoresAreKept opens a store written before sessions were tracked: its
// selections count as touched when the store is opened, so none is dropped on the first put.
// (Files of that time carry no schema version.)
func TestSelectionsOfOlderStoresAreKept(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `DROP TABLE sessions; INSERT INTO selections(session, seq, name) VALUES ('old', 1, 'a'); PRAGMA user_version = 0`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AddSelected(ctx, "new", []string{"b"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Selected(ctx, "old"); err != nil || len(got) != 1 {
		t.Errorf("Selected(old) = %v, %v; want [a]", got, err)
	}
}

// TestBlobRetentionKeepsTheNewestWithinTheCap lowers the total cap (256 MiB in production) to
// check the rule itself: the oldest blobs go until the rest fits, and one blob larger than the
// cap is refused without touching the others.
func TestBlobRetentionKeepsTheNewestWithinTheCap(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.maxBlobs = 100
	for _, key := range []string{"a", "b", "c"} {
		if err := s.PutBlob(ctx, "s", key, make([]byte, 40)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Blob(ctx, "a"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the oldest blob survived past the cap: %v", err)
	}
	for _, key := range []string{"b", "c"} {
		if _, err := s.Blob(ctx, key); err != nil {
			t.Errorf("blob %q: %v", key, err)
		}
	}
	if err := s.PutBlob(ctx, "s", "huge", make([]byte, 101)); err == nil || !strings.Contains(err.Error(), "more than the store keeps (100)") {
		t.Errorf("a blob over the cap: %v", err)
	}
	if _, err := s.Blob(ctx, "b"); err != nil {
		t.Errorf("a refused put dropped blob b: %v", err)
	}
}

// TestRetentionNeverDropsSessions: an idle session loses its selections like any other, but a
// session with a transcript or settings stays however old it is; and a turn counts as activity.
func TestRetentionNeverDropsSessions(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(ctx, "chat", 0, sessiontest.Transcript()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "settings", func(in *session.Info) error { in.Model = "openai/gpt-5"; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"chat", "settings", "busy", "idle"} {
		if _, err := s.AddSelected(ctx, k, []string{"a"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Append(ctx, "busy", 0, sessiontest.Transcript()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE sessions SET touched = unixepoch() - ? WHERE session IN ('chat', 'settings', 'idle')`, MaxSelectionAge+60); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSelected(ctx, "other", []string{"b"}); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int{"chat": 0, "settings": 0, "idle": 0, "busy": 1} {
		if got, _ := s.Selected(ctx, k); len(got) != want {
			t.Errorf("Selected(%q) = %v, want %d names", k, got, want)
		}
	}
	for _, k := range []string{"chat", "settings", "busy"} {
		if _, err := s.Session(ctx, k); err != nil {
			t.Errorf("retention dropped session %q: %v", k, err)
		}
	}
	if tr, err := s.Transcript(ctx, "chat"); err != nil || len(tr) != len(sessiontest.Transcript()) {
		t.Errorf("transcript of an idle session: %d messages, %v", len(tr), err)
	}
	var rows int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE session = 'idle'`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("the row of a selections-only idle session: %d, %v", rows, err)
	}
}

// TestRetentionKeepsTheAppsOwnBlobs: a server's last tool listing (a blob of no session) outlives
// the week and the byte cap that bound raw outputs: it is replaced at each connection, and a
// gateway connected for longer must still start from it.
func TestRetentionKeepsTheAppsOwnBlobs(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.maxBlobs = 100
	if _, err := s.db.ExecContext(ctx, `INSERT INTO blobs(key, session, created, data) VALUES
		('mcp-manifest:old', '', unixepoch() - ?, x'00'), ('raw-old', 's', unixepoch() - ?, x'00')`, MaxBlobAge+60, MaxBlobAge+60); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlob(ctx, "", "mcp-manifest:big", make([]byte, 90)); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "b", "c"} {
		if err := s.PutBlob(ctx, "s", key, make([]byte, 40)); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"mcp-manifest:old", "mcp-manifest:big", "b", "c"} {
		if _, err := s.Blob(ctx, key); err != nil {
			t.Errorf("blob %q: %v", key, err)
		}
	}
	for _, key := range []string{"raw-old", "a"} {
		if _, err := s.Blob(ctx, key); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("blob %q survived retention: %v", key, err)
		}
	}
}
