// Package sessiontest is the conformance suite every session.Store implementation passes, and
// the benchmarks they share.
package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/session"
)

// Run checks a store. open returns a fresh, empty store; reopen (may be nil) reopens the same
// durable medium after Close, to check persistence.
func Run(t *testing.T, open func(t *testing.T) session.Store, reopen func(t *testing.T) session.Store) {
	ctx := context.Background()
	t.Run("a session keeps its latest selections", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		var names []string
		for i := range session.MaxSelected + 10 {
			names = append(names, fmt.Sprintf("t%d", i))
		}
		// In steps, as searches add them: the first ten go once the bound is passed.
		for lo := 0; lo < len(names); lo += 100 {
			if _, err := s.AddSelected(ctx, "a", names[lo:min(lo+100, len(names))]); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Selected(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(names[10:], got); diff != "" {
			t.Errorf("selected (-want +got):\n%s", diff)
		}
		// A dropped one can be selected again, as the latest.
		if added, err := s.AddSelected(ctx, "a", []string{"t0"}); err != nil || !slices.Equal(added, []string{"t0"}) {
			t.Fatalf("re-adding a dropped selection: %v, %v", added, err)
		}
		if got, _ := s.Selected(ctx, "a"); len(got) != session.MaxSelected || got[0] != "t11" || got[len(got)-1] != "t0" {
			t.Errorf("after re-adding t0: %d selections, from %v to %v", len(got), got[:1], got[len(got)-1:])
		}
	})
	t.Run("selections accumulate in order", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		added, err := s.AddSelected(ctx, "a", []string{"x", "y"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"x", "y"}, added); diff != "" {
			t.Errorf("added (-want +got):\n%s", diff)
		}
		added, err = s.AddSelected(ctx, "a", []string{"y", "z", "z"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"z"}, added); diff != "" {
			t.Errorf("second add (-want +got):\n%s", diff)
		}
		got, err := s.Selected(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"x", "y", "z"}, got); diff != "" {
			t.Errorf("selected (-want +got):\n%s", diff)
		}
		other, _ := s.Selected(ctx, "b")
		if len(other) != 0 {
			t.Errorf("session b sees %v", other)
		}
	})
	t.Run("blobs", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		if _, err := s.Blob(ctx, "k"); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("missing blob: err = %v, want ErrNotFound", err)
		}
		want := []byte("raw\x00output\xff")
		if err := s.PutBlob(ctx, "a", "k", want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Blob(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("blob (-want +got):\n%s", diff)
		}
	})
	runSessions(t, open)
	runPages(t, open)
	runLeases(t, open)
	if reopen == nil {
		return
	}
	t.Run("survives reopen", func(t *testing.T) {
		s := open(t)
		if _, err := s.AddSelected(ctx, "p", []string{"one", "two"}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutBlob(ctx, "p", "h", []byte("data")); err != nil {
			t.Fatal(err)
		}
		msgs := Transcript()
		if _, err := s.Append(ctx, "p", 0, msgs); err != nil {
			t.Fatal(err)
		}
		info, err := s.Update(ctx, "p", func(in *session.Info) error {
			in.Model = "anthropic/claude-sonnet-4-5"
			in.Agent = "work"
			in.Overrides["thinking"] = "high"
			in.Counters["model_calls"] = 3
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = reopen(t)
		defer s.Close()
		got, err := s.Selected(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"one", "two"}, got); diff != "" {
			t.Errorf("after reopen (-want +got):\n%s", diff)
		}
		if b, err := s.Blob(ctx, "h"); err != nil || string(b) != "data" {
			t.Errorf("blob after reopen = %q, %v", b, err)
		}
		again, err := s.Session(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(info, again); diff != "" {
			t.Errorf("session after reopen (-before +after):\n%s", diff)
		}
		tr, err := s.Transcript(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(msgs, tr); diff != "" {
			t.Errorf("transcript after reopen (-want +got):\n%s", diff)
		}
		if _, err := s.Append(ctx, "p", len(msgs), msgs[:1]); err != nil {
			t.Errorf("append after reopen at the stored length: %v", err)
		}
	})
}
