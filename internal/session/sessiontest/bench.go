package sessiontest

import (
	"context"
	"fmt"
	"testing"

	"github.com/nodmix/nodmix/internal/session"
)

// Bench measures what an agent turn costs the store at a transcript of 100 messages: appending
// them to a new session, and reading them back.
func Bench(b *testing.B, open func(b *testing.B) session.Store) {
	ctx := context.Background()
	msgs := Long(100)
	b.Run("append-100", func(b *testing.B) {
		s := open(b)
		defer s.Close()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if _, err := s.Append(ctx, fmt.Sprint("s", i), 0, msgs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("transcript-100", func(b *testing.B) {
		s := open(b)
		defer s.Close()
		if _, err := s.Append(ctx, "s", 0, msgs); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			got, err := s.Transcript(ctx, "s")
			if err != nil || len(got) != len(msgs) {
				b.Fatal(len(got), err)
			}
		}
	})
	b.Run("turn-at-100", func(b *testing.B) {
		// One turn on a session of 100 messages: read the transcript, append two messages.
		s := open(b)
		defer s.Close()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			key := fmt.Sprint("t", i)
			if _, err := s.Append(ctx, key, 0, msgs[:98]); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			tr, err := s.Transcript(ctx, key)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Append(ctx, key, len(tr), msgs[98:]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
