package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

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

// BenchmarkTurnCalls is the store's share of one agent turn on a short session, as the runner
// makes it: lease, transcript, append the input, count, append the answer, unlease. Turns go
// round 50 sessions, each removed after 10 turns, so transcripts stay under 20 messages.
func BenchmarkTurnCalls(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	msgs := sessiontest.Long(4)
	h := session.NewHolder(1)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		key := fmt.Sprint("s", i%50)
		if round := i / 50; round > 0 && round%10 == 0 {
			if err := s.DeleteSession(ctx, key); err != nil && !errors.Is(err, session.ErrNotFound) {
				b.Fatal(err)
			}
		}
		if err := s.Lease(ctx, key, h, time.Minute); err != nil {
			b.Fatal(err)
		}
		tr, err := s.Transcript(ctx, key)
		if err != nil && !errors.Is(err, session.ErrNotFound) {
			b.Fatal(err)
		}
		if _, err := s.Append(ctx, key, len(tr), msgs[:1]); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Update(ctx, key, func(in *session.Info) error { in.Counters["turns"]++; return nil }); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Append(ctx, key, len(tr)+1, msgs[1:2]); err != nil {
			b.Fatal(err)
		}
		if err := s.Unlease(ctx, key, h.Token); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
