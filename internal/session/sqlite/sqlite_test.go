package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
	"github.com/nodmix/nodmix/internal/session/sqlite"
)

func TestConformance(t *testing.T) {
	var path string
	open := func(t *testing.T) session.Store {
		path = filepath.Join(t.TempDir(), "state.db")
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	reopen := func(t *testing.T) session.Store {
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sessiontest.Run(t, open, reopen)
}

func BenchmarkSQLite(b *testing.B) {
	sessiontest.Bench(b, func(b *testing.B) session.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "state.db"))
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
