package sqlite

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
