package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/session"
)

// Make creates n sessions through Update, keyed s000, s001, …, the last created the most
// recently updated, and returns their keys in listing order (newest first).
func Make(ctx context.Context, tb testing.TB, s session.Store, n int) []string {
	tb.Helper()
	keys := make([]string, n)
	for i := range n {
		k := fmt.Sprintf("s%03d", i)
		if _, err := s.Update(ctx, k, func(*session.Info) error { return nil }); err != nil {
			tb.Fatal(err)
		}
		keys[n-1-i] = k
	}
	return keys
}

// Walk lists every page of limit sessions from the start, calling between(page) after each
// page but the last, and returns the keys in the order met. It fails tb if the walk takes more
// pages than max.
func Walk(ctx context.Context, tb testing.TB, s session.Store, limit, max int, between func(page int)) []string {
	tb.Helper()
	var keys []string
	var after session.Cursor
	for page := 0; ; page++ {
		if page == max {
			tb.Fatalf("the walk did not end after %d pages", max)
		}
		rows, next, err := s.SessionsPage(ctx, after, limit)
		if err != nil {
			tb.Fatal(err)
		}
		if len(rows) > limit || len(rows) < limit && !next.IsZero() {
			tb.Fatalf("page %d: %d rows of %d and a next cursor %v", page, len(rows), limit, next)
		}
		for _, in := range rows {
			keys = append(keys, in.Key)
		}
		if next.IsZero() {
			return keys
		}
		if between != nil {
			between(page)
		}
		after = next
	}
}

// runPages checks the paged listing.
func runPages(t *testing.T, open func(t *testing.T) session.Store) {
	ctx := context.Background()
	t.Run("pages visit every session once in order", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		want := Make(ctx, t, s, 250)
		// An MCP client's selections are no session: not listed.
		if _, err := s.AddSelected(ctx, "mcp-1", []string{"a"}); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{1, 100, 250, session.MaxPage} {
			if diff := cmp.Diff(want, Walk(ctx, t, s, limit, 251, nil)); diff != "" {
				t.Errorf("pages of %d (-want +got):\n%s", limit, diff)
			}
		}
		all, err := session.AllSessions(ctx, s)
		if err != nil || len(all) != len(want) {
			t.Fatalf("Sessions: %d, %v", len(all), err)
		}
		page, _, err := s.SessionsPage(ctx, session.Cursor{}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all[:3], page); diff != "" {
			t.Errorf("the first page's rows are not the listing's (-Sessions +page):\n%s", diff)
		}
	})
	t.Run("an empty store has one empty page", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		page, next, err := s.SessionsPage(ctx, session.Cursor{}, 10)
		if err != nil || len(page) != 0 || !next.IsZero() {
			t.Errorf("SessionsPage = %v, %v, %v", page, next, err)
		}
	})
	t.Run("a limit out of range", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		for _, limit := range []int{0, -1, session.MaxPage + 1} {
			if _, _, err := s.SessionsPage(ctx, session.Cursor{}, limit); !errors.Is(err, session.ErrInvalidLimit) {
				t.Errorf("limit %d: %v, want ErrInvalidLimit", limit, err)
			}
		}
	})
	// Sessions updated between pages move to the front, before the walk's cursor: the walk
	// returns none twice and ends; an updated one it had not reached is left for the next walk.
	t.Run("updates during a walk", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		keys := Make(ctx, t, s, 250)
		touch := func(k string) {
			if _, err := s.Update(ctx, k, func(in *session.Info) error { in.Model = "p/m"; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		// After page 0, a session of page 0 and one of page 2; after page 1, a session of
		// page 0 again and the one just listed last.
		updated := map[int][]string{0: {keys[5], keys[220]}, 1: {keys[7], keys[199]}}
		got := Walk(ctx, t, s, 100, 10, func(page int) {
			for _, k := range updated[page] {
				touch(k)
			}
		})
		seen := map[string]int{}
		for _, k := range got {
			seen[k]++
		}
		for k, n := range seen {
			if n > 1 {
				t.Errorf("%s listed %d times in one walk", k, n)
			}
		}
		var want []string
		for _, k := range keys {
			if k != keys[220] {
				want = append(want, k)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the walk (-want +got):\n%s", diff)
		}
		// The next walk starts with them, the latest update first.
		again := Walk(ctx, t, s, 100, 10, nil)
		if diff := cmp.Diff([]string{keys[199], keys[7], keys[220], keys[5]}, again[:4]); diff != "" {
			t.Errorf("the next walk's front (-want +got):\n%s", diff)
		}
		if len(again) != len(keys) {
			t.Errorf("the next walk lists %d sessions, want %d", len(again), len(keys))
		}
	})
	t.Run("a removed cursor session", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		keys := Make(ctx, t, s, 5)
		page, next, err := s.SessionsPage(ctx, session.Cursor{}, 2)
		if err != nil {
			t.Fatal(err)
		}
		// The cursor is a place in the order, not a row: the page after it holds what follows.
		if err := s.DeleteSession(ctx, page[1].Key); err != nil {
			t.Fatal(err)
		}
		rest, _, err := s.SessionsPage(ctx, next, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, in := range rest {
			got = append(got, in.Key)
		}
		if diff := cmp.Diff(keys[2:], got); diff != "" {
			t.Errorf("after the removed session (-want +got):\n%s", diff)
		}
	})
}
