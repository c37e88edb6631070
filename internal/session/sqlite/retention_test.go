package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/nodmix/nodmix/internal/session"
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
