package sqlite

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

// Blob retention runs in every put, under the write lock: its queries must read the blobs_age
// index, not scan and sort every blob kept (which made a put's cost grow with the blobs, and so
// the puts of a session's life quadratic). Checked on the query plans, for new and migrated files.
func TestBlobRetentionReadsTheIndex(t *testing.T) {
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
			for _, q := range []struct {
				sql  string
				args []any
			}{{blobsExpire, []any{MaxBlobAge}}, {blobsTotal, nil}, {blobsOldest, nil}} {
				rows, err := s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q.sql, q.args...)
				if err != nil {
					t.Fatal(err)
				}
				var plan []string
				for rows.Next() {
					var id, parent, unused int
					var detail string
					if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
						t.Fatal(err)
					}
					plan = append(plan, detail)
				}
				rows.Close()
				all := strings.Join(plan, "; ")
				if !strings.Contains(all, "blobs_age") || strings.Contains(all, "TEMP B-TREE FOR ORDER BY") {
					// Sorting the blobs of one second (LAST TERM) is fine: the walk stops early.
					t.Errorf("%s\nplan: %s; want the blobs_age index and no sort of every blob", q.sql, all)
				}
			}
		})
	}
}

// BenchmarkPutBlobManyKept is a put into a store that keeps 5,000 session blobs and is at its
// cap, so that every put drops the oldest.
func BenchmarkPutBlobManyKept(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data := make([]byte, 2000)
	s.maxBlobs = 5000 * len(data)
	for i := range 5000 {
		if err := s.PutBlob(ctx, "s", "k"+strconv.Itoa(i), data); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		i++
		if err := s.PutBlob(ctx, "s", "n"+strconv.Itoa(i), data); err != nil {
			b.Fatal(err)
		}
	}
}

// Removing a session drops its blobs through blobs_session, in new and migrated files, instead
// of reading every blob kept under the write lock.
func TestSessionBlobsDeleteReadsTheIndex(t *testing.T) {
	ctx := context.Background()
	for name, path := range map[string]string{
		"new":       filepath.Join(t.TempDir(), "state.db"),
		"version 0": writeOld(t),
		"version 1": writeVersion1(t, ""),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var plan []string
			rows, err := s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+blobsOfSession, "s")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			if all := strings.Join(plan, "; "); !strings.Contains(all, "USING COVERING INDEX blobs_session") && !strings.Contains(all, "USING INDEX blobs_session") {
				t.Errorf("plan: %s; want a search of blobs_session", all)
			}
		})
	}
}

// queryPlan is the details of EXPLAIN QUERY PLAN for q, joined.
func queryPlan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), `EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

// A page of the listing reads sessions_recent from the cursor on, in its order, in new and
// migrated files: no scan of every session and no sort of them all for each page.
func TestSessionsPageReadsTheIndex(t *testing.T) {
	ctx := context.Background()
	for name, path := range map[string]string{
		"new":       filepath.Join(t.TempDir(), "state.db"),
		"version 0": writeOld(t),
		"version 1": writeVersion1(t, ""),
		"version 2": writeVersion2(t),
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// The first page walks the index from its start and stops at the limit; a later one
			// seeks the cursor's place in it.
			for _, c := range []struct {
				sql, want string
				args      []any
			}{
				{sessionsFirstPage, "SCAN sessions USING INDEX sessions_recent", []any{101}},
				{sessionsNextPage, "SEARCH sessions USING INDEX sessions_recent (updated<?)", []any{int64(1e15), int64(1e15), "k", 101}},
			} {
				all := queryPlan(t, s, c.sql, c.args...)
				if all != c.want {
					t.Errorf("%s\nplan: %s; want %s (no sort)", c.sql, all, c.want)
				}
			}
		})
	}
}

// Sessions of one microsecond (rows a file of another writer may hold: Stamp keeps this
// store's apart) are paged by key, none skipped nor repeated.
func TestSessionsPageBreaksTiesByKey(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sessiontest.Make(ctx, t, s, 6)
	if _, err := s.db.ExecContext(ctx, `UPDATE sessions SET updated = 1000 WHERE session IN ('s001', 's002', 's003', 's004')`); err != nil {
		t.Fatal(err)
	}
	want := []string{"s005", "s000", "s001", "s002", "s003", "s004"}
	if diff := cmp.Diff(want, sessiontest.Walk(ctx, t, s, 1, 10, nil)); diff != "" {
		t.Errorf("pages of one (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, sessiontest.Walk(ctx, t, s, 2, 10, nil)); diff != "" {
		t.Errorf("pages of two (-want +got):\n%s", diff)
	}
}
