package sessiontest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
)

// runSessions checks sessions proper: rows, transcripts, settings and their removal.
func runSessions(t *testing.T, open func(t *testing.T) session.Store) {
	ctx := context.Background()
	t.Run("session keys", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		for _, key := range []string{"", strings.Repeat("k", session.MaxKeyLen+1), "a\x00b", "a\r\nb", "a\u009bb", "\xff\xfe"} {
			noop := func(*session.Info) error { return nil }
			errs := map[string]error{}
			_, errs["Session"] = s.Session(ctx, key)
			_, errs["Transcript"] = s.Transcript(ctx, key)
			_, errs["Append"] = s.Append(ctx, key, 0, Transcript())
			_, errs["Update"] = s.Update(ctx, key, noop)
			errs["DeleteSession"] = s.DeleteSession(ctx, key)
			for m, err := range errs {
				if !errors.Is(err, session.ErrInvalidKey) || !strings.Contains(err.Error(), "session key") {
					t.Errorf("%s with a %d-byte key: %v, want ErrInvalidKey naming the session key", m, len(key), err)
				}
			}
		}
		all, err := session.AllSessions(ctx, s)
		if err != nil || len(all) != 0 {
			t.Errorf("refused keys left sessions: %v, %v", all, err)
		}
		// Any other string is a key.
		for _, key := range []string{strings.Repeat("é", session.MaxKeyLen/2), "user:42/chat 7", "'; DROP TABLE sessions; --"} {
			if _, err := s.Append(ctx, key, 0, Transcript()[:1]); err != nil {
				t.Errorf("Append(%q): %v", key, err)
				continue
			}
			if in, err := s.Session(ctx, key); err != nil || in.Key != key || in.Messages != 1 {
				t.Errorf("Session(%q) = %+v, %v", key, in, err)
			}
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		if _, err := s.Session(ctx, "nope"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Session: %v, want ErrNotFound", err)
		}
		if _, err := s.Transcript(ctx, "nope"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Transcript: %v, want ErrNotFound", err)
		}
		if err := s.DeleteSession(ctx, "nope"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("DeleteSession: %v, want ErrNotFound", err)
		}
		if all, err := session.AllSessions(ctx, s); err != nil || len(all) != 0 {
			t.Errorf("Sessions of an empty store = %v, %v", all, err)
		}
	})
	t.Run("selections and blobs alone are not a session", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		if _, err := s.AddSelected(ctx, "mcp-1", []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutBlob(ctx, "mcp-1", "b1", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(ctx, "mcp-1"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Session: %v, want ErrNotFound", err)
		}
		if err := s.DeleteSession(ctx, "mcp-1"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("DeleteSession: %v, want ErrNotFound", err)
		}
		if sel, _ := s.Selected(ctx, "mcp-1"); len(sel) != 1 {
			t.Errorf("a refused delete dropped selections: %v", sel)
		}
		if all, _ := session.AllSessions(ctx, s); len(all) != 0 {
			t.Errorf("Sessions lists %v", all)
		}
		// The first append makes it a session and keeps what it had.
		if _, err := s.Append(ctx, "mcp-1", 0, Transcript()[:1]); err != nil {
			t.Fatal(err)
		}
		if sel, _ := s.Selected(ctx, "mcp-1"); len(sel) != 1 {
			t.Errorf("selections after the first append: %v", sel)
		}
	})
	t.Run("append and transcript keep every byte", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		msgs := Transcript()
		before := time.Now().Add(-time.Second)
		info, err := s.Append(ctx, "a", 0, msgs[:2])
		if err != nil {
			t.Fatal(err)
		}
		if info.Key != "a" || info.Messages != 2 || info.Created.Before(before) || !info.Created.Equal(info.Updated) {
			t.Errorf("first append = %+v", info)
		}
		info2, err := s.Append(ctx, "a", 2, msgs[2:])
		if err != nil {
			t.Fatal(err)
		}
		if info2.Messages != len(msgs) || !info2.Created.Equal(info.Created) || !info2.Updated.After(info.Updated) {
			t.Errorf("second append = %+v after %+v", info2, info)
		}
		got, err := s.Transcript(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(msgs, got); diff != "" {
			t.Errorf("transcript (-want +got):\n%s", diff)
		}
		// The bytes providers need back exactly, spelled out.
		for _, c := range []struct {
			name      string
			got, want []byte
		}{
			{"thinking raw", got[1].Parts[0].Raw, []byte(rawThinking)},
			{"reasoning raw", got[1].Parts[1].Raw, []byte(rawReason)},
			{"call args", got[1].Parts[3].Args, []byte(argsOdd)},
			{"call meta", got[1].Parts[3].Meta, []byte(metaGemini)},
			{"broken args", got[1].Parts[4].Args, []byte(argsBroken)},
			{"spaced raw", got[3].Parts[0].Raw, []byte(rawSpaced)},
			{"null meta", got[3].Parts[0].Meta, []byte("null")},
			{"non-UTF-8 raw", got[3].Parts[1].Raw, []byte(rawNotUTF8)},
		} {
			if !bytes.Equal(c.got, c.want) {
				t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
			}
		}
		row, err := s.Session(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(info2, row); diff != "" {
			t.Errorf("Session differs from what Append returned (-append +session):\n%s", diff)
		}
	})
	t.Run("append at a stale base conflicts and writes nothing", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		msgs := Transcript()
		if _, err := s.Append(ctx, "a", 1, msgs); !errors.Is(err, session.ErrConflict) {
			t.Errorf("creating at base 1: %v, want ErrConflict", err)
		}
		if _, err := s.Session(ctx, "a"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("a refused append created the session: %v", err)
		}
		info, err := s.Append(ctx, "a", 0, msgs[:3])
		if err != nil {
			t.Fatal(err)
		}
		for _, base := range []int{0, 2, 4, -1} {
			if _, err := s.Append(ctx, "a", base, msgs[3:]); !errors.Is(err, session.ErrConflict) {
				t.Errorf("base %d with 3 stored: %v, want ErrConflict", base, err)
			}
		}
		got, _ := s.Transcript(ctx, "a")
		if diff := cmp.Diff(msgs[:3], got); diff != "" {
			t.Errorf("transcript after conflicts (-want +got):\n%s", diff)
		}
		if row, _ := s.Session(ctx, "a"); !cmp.Equal(info, row) {
			t.Errorf("conflicts changed the row: %+v, was %+v", row, info)
		}
		// Appending nothing at the right base is a no-op that succeeds.
		if row, err := s.Append(ctx, "a", 3, nil); err != nil || row.Messages != 3 {
			t.Errorf("empty append = %+v, %v", row, err)
		}
	})
	t.Run("values are the caller's own", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		msgs := Transcript()
		if _, err := s.Append(ctx, "a", 0, msgs); err != nil {
			t.Fatal(err)
		}
		msgs[1].Parts[0].Raw[0] = 'X'
		msgs[0].Parts[0].Text = "changed"
		got, _ := s.Transcript(ctx, "a")
		got[1].Parts[1].Raw[0] = 'Y'
		got[2].Parts = nil
		again, _ := s.Transcript(ctx, "a")
		if diff := cmp.Diff(Transcript(), again); diff != "" {
			t.Errorf("changes by the caller reached the store (-want +got):\n%s", diff)
		}
		in, err := s.Update(ctx, "a", func(in *session.Info) error { in.Overrides["fast"] = "on"; return nil })
		if err != nil {
			t.Fatal(err)
		}
		in.Overrides["fast"] = "off"
		row, _ := s.Session(ctx, "a")
		row.Overrides["verbose"] = "full"
		row, _ = s.Session(ctx, "a")
		if diff := cmp.Diff(map[string]string{"fast": "on"}, row.Overrides); diff != "" {
			t.Errorf("overrides (-want +got):\n%s", diff)
		}
	})
	t.Run("update", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		refuse := errors.New("refused")
		if _, err := s.Update(ctx, "u", func(*session.Info) error { return refuse }); !errors.Is(err, refuse) {
			t.Errorf("fn's error: %v", err)
		}
		if _, err := s.Session(ctx, "u"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("a failed update created the session: %v", err)
		}
		var seen session.Info
		info, err := s.Update(ctx, "u", func(in *session.Info) error {
			seen = *in.Clone()
			if in.Overrides == nil || in.Counters == nil {
				return errors.New("nil maps inside fn")
			}
			in.Model = "openai/gpt-5"
			in.Agent = "ops"
			in.Overrides["thinking"] = "high"
			in.Overrides["reasoning"] = "stream"
			in.Counters["model_calls"] = 2
			in.Counters["input_tokens"] = 1 << 40
			// Not fn's to change:
			in.Key, in.Messages, in.Created = "other", 99, time.Unix(1, 0)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if seen.Key != "u" || seen.Model != "" || len(seen.Overrides) != 0 || !seen.Created.IsZero() {
			t.Errorf("fn saw %+v for a new session, want a zero Info with Key set", seen)
		}
		want := &session.Info{Key: "u", Model: "openai/gpt-5", Agent: "ops",
			Overrides: map[string]string{"thinking": "high", "reasoning": "stream"},
			Counters:  map[string]int64{"model_calls": 2, "input_tokens": 1 << 40},
			Created:   info.Created, Updated: info.Updated}
		if diff := cmp.Diff(want, info); diff != "" {
			t.Errorf("update (-want +got):\n%s", diff)
		}
		if info.Created.IsZero() || info.Created.Location() != time.UTC {
			t.Errorf("created = %v, want a UTC time", info.Created)
		}
		if _, err := s.Session(ctx, "other"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("fn changing Key made a session: %v", err)
		}
		if _, err := s.Update(ctx, "u", func(in *session.Info) error { in.Model = "x/y"; return refuse }); !errors.Is(err, refuse) {
			t.Errorf("fn's error: %v", err)
		}
		if row, _ := s.Session(ctx, "u"); !cmp.Equal(info, row) {
			t.Errorf("a failed update changed the row: %+v", row)
		}
		info2, err := s.Update(ctx, "u", func(in *session.Info) error {
			clear(in.Overrides)
			delete(in.Counters, "input_tokens")
			in.Model = ""
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if info2.Overrides != nil || info2.Model != "" || len(info2.Counters) != 1 || !info2.Updated.After(info.Updated) || !info2.Created.Equal(info.Created) {
			t.Errorf("clearing update = %+v", info2)
		}
		if _, err := s.Append(ctx, "u", 0, Transcript()[:1]); err != nil {
			t.Errorf("a session created by Update starts with an empty transcript: %v", err)
		}
	})
	t.Run("concurrent updates add up", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		const workers, each = 8, 25
		var calls atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for range workers {
			wg.Go(func() {
				for range each {
					_, err := s.Update(ctx, "c", func(in *session.Info) error {
						calls.Add(1)
						in.Counters["model_calls"]++
						in.Counters["input_tokens"] += 100
						return nil
					})
					if err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		info, err := s.Session(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"model_calls": workers * each, "input_tokens": workers * each * 100}
		if diff := cmp.Diff(want, info.Counters); diff != "" {
			t.Errorf("counters after %d updates (-want +got):\n%s", workers*each, diff)
		}
		if calls.Load() < workers*each {
			t.Errorf("fn ran %d times for %d updates", calls.Load(), workers*each)
		}
	})
	t.Run("an update retried does not count twice", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		// While the first update's fn runs, a second update is made. A store that runs fn
		// outside its lock retries the first on the new row; one that holds a lock makes the
		// second wait. Either way each increment lands once.
		started, other := make(chan struct{}), make(chan error, 1)
		var calls atomic.Int64
		_, err := s.Update(ctx, "r", func(in *session.Info) error {
			if calls.Add(1) == 1 {
				go func() {
					_, err := s.Update(ctx, "r", func(in *session.Info) error { in.Counters["n"] += 10; return nil })
					other <- err
				}()
				close(started)
				select {
				case err := <-other:
					other <- err
				case <-time.After(200 * time.Millisecond):
				}
			}
			in.Counters["n"]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		<-started
		if err := <-other; err != nil {
			t.Fatal(err)
		}
		info, _ := s.Session(ctx, "r")
		if got := info.Counters["n"]; got != 11 {
			t.Errorf("n = %d after +1 and +10 (fn ran %d times), want 11", got, calls.Load())
		}
	})
	t.Run("sessions list the most recently updated first", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		for _, k := range []string{"a", "b", "c"} {
			if _, err := s.Append(ctx, k, 0, Transcript()[:1]); err != nil {
				t.Fatal(err)
			}
		}
		order := func() []string {
			all, err := session.AllSessions(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for i, in := range all {
				keys = append(keys, in.Key)
				if i > 0 && !in.Updated.Before(all[i-1].Updated) {
					t.Errorf("%s updated %v, not before %s at %v", in.Key, in.Updated, all[i-1].Key, all[i-1].Updated)
				}
			}
			return keys
		}
		if diff := cmp.Diff([]string{"c", "b", "a"}, order()); diff != "" {
			t.Errorf("after creating a, b, c (-want +got):\n%s", diff)
		}
		if _, err := s.Update(ctx, "a", func(in *session.Info) error { in.Model = "p/m"; return nil }); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a", "c", "b"}, order()); diff != "" {
			t.Errorf("after updating a (-want +got):\n%s", diff)
		}
		if _, err := s.Append(ctx, "b", 1, Transcript()[1:2]); err != nil {
			t.Fatal(err)
		}
		all, _ := session.AllSessions(ctx, s)
		if diff := cmp.Diff([]string{"b", "a", "c"}, order()); diff != "" {
			t.Errorf("after appending to b (-want +got):\n%s", diff)
		}
		if all[0].Messages != 2 || all[1].Model != "p/m" {
			t.Errorf("rows: %+v", all)
		}
	})
	t.Run("an append on a session removed since it was read", func(t *testing.T) {
		// A turn in one process, `nodmix sessions rm` in another: the turn's next write finds
		// the session gone. It conflicts, says why, and brings back nothing of the session.
		s := open(t)
		defer s.Close()
		msgs := Transcript()
		if _, err := s.Append(ctx, "a", 0, msgs[:2]); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSession(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		_, err := s.Append(ctx, "a", 2, msgs[2:])
		if !errors.Is(err, session.ErrConflict) || !errors.Is(err, session.ErrNotFound) {
			t.Errorf("append after the session was removed: %v, want ErrConflict and ErrNotFound", err)
		}
		if _, err := s.Session(ctx, "a"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("the removed session came back: %v", err)
		}
		// A stale base on a session that exists is a conflict only.
		if _, err := s.Append(ctx, "b", 0, msgs[:2]); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, "b", 1, msgs[2:]); !errors.Is(err, session.ErrConflict) || errors.Is(err, session.ErrNotFound) {
			t.Errorf("stale base on a live session: %v, want ErrConflict alone", err)
		}
	})
	t.Run("delete session removes everything it holds", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		for _, k := range []string{"gone", "kept"} {
			if _, err := s.Append(ctx, k, 0, Transcript()); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Update(ctx, k, func(in *session.Info) error { in.Overrides["trace"] = "on"; return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AddSelected(ctx, k, []string{"t1", "t2"}); err != nil {
				t.Fatal(err)
			}
			if err := s.PutBlob(ctx, k, "blob-"+k, []byte(k)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.DeleteSession(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(ctx, "gone"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Session after delete: %v", err)
		}
		if _, err := s.Transcript(ctx, "gone"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Transcript after delete: %v", err)
		}
		if sel, err := s.Selected(ctx, "gone"); err != nil || len(sel) != 0 {
			t.Errorf("Selected after delete = %v, %v", sel, err)
		}
		if _, err := s.Blob(ctx, "blob-gone"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Blob after delete: %v", err)
		}
		if err := s.DeleteSession(ctx, "gone"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("second delete: %v, want ErrNotFound", err)
		}
		// The other session is untouched.
		if tr, err := s.Transcript(ctx, "kept"); err != nil || !cmp.Equal(Transcript(), tr) {
			t.Errorf("kept transcript: %v", err)
		}
		if sel, _ := s.Selected(ctx, "kept"); len(sel) != 2 {
			t.Errorf("kept selections: %v", sel)
		}
		if b, err := s.Blob(ctx, "blob-kept"); err != nil || string(b) != "kept" {
			t.Errorf("kept blob = %q, %v", b, err)
		}
		if all, _ := session.AllSessions(ctx, s); len(all) != 1 || all[0].Key != "kept" {
			t.Errorf("Sessions = %v", all)
		}
		// The key can start over.
		info, err := s.Append(ctx, "gone", 0, Transcript()[:1])
		if err != nil {
			t.Fatal(err)
		}
		if info.Messages != 1 || info.Overrides != nil {
			t.Errorf("a new session under a deleted key = %+v", info)
		}
	})
	t.Run("concurrent appends at one base: one wins", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		if _, err := s.Append(ctx, "race", 0, Transcript()[:1]); err != nil {
			t.Fatal(err)
		}
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				msg := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: fmt.Sprint("turn ", i)}}}
				_, errs[i] = s.Append(ctx, "race", 1, []llm.Message{msg, msg})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("appends %d and %d both won", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, session.ErrConflict):
				t.Errorf("append %d: %v, want ErrConflict", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no append won")
		}
		got, err := s.Transcript(ctx, "race")
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprint("turn ", winner)
		if len(got) != 3 || got[1].Text() != want || got[2].Text() != want {
			t.Errorf("transcript after the race: %d messages, want 3 from the winner (%q)", len(got), want)
		}
	})
	t.Run("a long transcript", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		msgs := Long(500)
		if _, err := s.Append(ctx, "long", 0, msgs[:250]); err != nil {
			t.Fatal(err)
		}
		for base := 250; base < len(msgs); base += 10 {
			if _, err := s.Append(ctx, "long", base, msgs[base:base+10]); err != nil {
				t.Fatalf("append at %d: %v", base, err)
			}
		}
		got, err := s.Transcript(ctx, "long")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(msgs, got); diff != "" {
			t.Errorf("500 messages (-want +got):\n%s", diff)
		}
		if info, _ := s.Session(ctx, "long"); info.Messages != 500 {
			t.Errorf("Messages = %d", info.Messages)
		}
	})
}
