package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
)

// filledFile writes a state.db of n sessions with a 5 KB message each (some 250 pages), with
// everything checkpointed into the file itself, and returns its path and bytes.
func filledFile(t *testing.T, n int) (string, []byte) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("x", 5000)
	for i := range n {
		if _, err := s.Append(ctx, fmt.Sprintf("k%d", i), 0, []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: text}}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// A state.db that is not SQLite, or is cut short or damaged, is refused by Open with an error
// naming the file and saying what is wrong with it, and is never rewritten nor replaced.
func TestOpenRefusesADamagedFile(t *testing.T) {
	ctx := context.Background()
	_, good := filledFile(t, 200)
	damage := map[string]func([]byte) []byte{
		"text":       func([]byte) []byte { return bytes.Repeat([]byte("not a database\n"), 40) },
		"cut in two": func(b []byte) []byte { return b[:len(b)/2] },
		"cut short":  func(b []byte) []byte { return b[:len(b)/10] },
		"header":     func(b []byte) []byte { b = bytes.Clone(b); copy(b[16:], []byte{0xff, 0xff, 0xff}); return b },
		"schema page": func(b []byte) []byte {
			b = bytes.Clone(b)
			for i := 120; i < 4096; i++ {
				b[i] = 0xaa
			}
			return b
		},
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			data := f(good)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(ctx, path)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted the damaged file")
			}
			for _, want := range []string{"state store " + path + ": ", "not a SQLite database or is damaged", "leaves it as it is"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not hold %q", err, want)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if sha256.Sum256(after) != sha256.Sum256(data) {
				t.Error("the damaged file was changed")
			}
		})
	}
}

// A file damaged under an open store (a disk error, a bad copy) fails the reads that meet the
// damage with an error naming the file, never a panic, and the rest still reads.
func TestDamageMetLaterNamesTheFile(t *testing.T) {
	ctx := context.Background()
	path, good := filledFile(t, 200)
	bad := bytes.Clone(good)
	// Pages well past the schema: message rows of some sessions.
	for i := 4096 * 100; i < 4096*110; i++ {
		bad[i] = 0xaa
	}
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	failed, read := 0, 0
	for i := range 200 {
		_, err := s.Transcript(ctx, fmt.Sprintf("k%d", i))
		if err == nil {
			read++
			continue
		}
		failed++
		if !strings.Contains(err.Error(), "state store "+path+": ") {
			t.Errorf("k%d: error %q does not name the file", i, err)
		}
	}
	if failed == 0 || read == 0 {
		t.Errorf("%d transcripts failed and %d read; want the damage met by some only", failed, read)
	}
}

// limitPages makes the store's file unable to grow past its size, as a full disk does; the
// store keeps one connection so the limit (a connection's setting) holds for all its writes.
func limitPages(t *testing.T, s *Store, extra int) {
	t.Helper()
	s.db.SetMaxOpenConns(1)
	var n int
	if err := s.db.QueryRow(`PRAGMA page_count`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, n+extra)); err != nil {
		t.Fatal(err)
	}
}

// A full disk fails the write with an error naming the file; the write leaves nothing behind
// (no part of a turn, no half of a blob), nothing stays locked, and once there is room again the
// same store writes.
func TestFullDiskWritesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := sessiontest.Transcript()
	if _, err := s.Append(ctx, "k", 0, first); err != nil {
		t.Fatal(err)
	}
	before, err := s.Session(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	limitPages(t, s, 2)
	big := strings.Repeat("y", 1<<20)
	turn := []llm.Message{
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, CallID: "c1", Name: "exec", Args: []byte(`{}`)}}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "c1", Name: "exec", Text: big}}},
	}
	writes := map[string]func() error{
		"append": func() error { _, err := s.Append(ctx, "k", len(first), turn); return err },
		"new session": func() error {
			_, err := s.Append(ctx, "other", 0, turn)
			return err
		},
		"blob": func() error { return s.PutBlob(ctx, "k", "raw", []byte(big)) },
	}
	for name, write := range writes {
		err := write()
		if err == nil {
			t.Fatalf("%s: a 1 MiB write fit in 2 pages", name)
		}
		for _, want := range []string{"state store " + path + ": ", "full"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not hold %q", name, err, want)
			}
		}
	}
	if got, err := s.Transcript(ctx, "k"); err != nil || !cmp.Equal(first, got) {
		t.Errorf("after the failed append: %d messages, %v; want the %d before", len(got), err, len(first))
	}
	if got, err := s.Session(ctx, "k"); err != nil || !cmp.Equal(before, got) {
		t.Errorf("row after the failed append: %+v, %v; want %+v", got, err, before)
	}
	if _, err := s.Session(ctx, "other"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the session whose first turn failed: %v; want not found", err)
	}
	if _, err := s.Blob(ctx, "raw"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the blob that failed: %v; want not found", err)
	}
	// Room again: the same store, and another process's store, write at once.
	if _, err := s.db.Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "k", len(first), turn); err != nil {
		t.Fatalf("append once there is room: %v", err)
	}
	other, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Append(ctx, "other", 0, turn); err != nil {
		t.Fatalf("another store's append: %v", err)
	}
}

// A transcript whose rows disagree with its session's row (a message row lost to damage, a length
// edited by hand) is refused with an error naming the file, instead of being sent without the
// lost message (maybe a tool result, which every provider then refuses) or failing every later
// append as busy; no length, however large, panics.
func TestTranscriptDisagreeingWithItsRowIsRefused(t *testing.T) {
	ctx := context.Background()
	for name, damage := range map[string]string{
		"a middle message gone": `DELETE FROM messages WHERE session = 'k' AND seq = 2`,
		"the last message gone": `DELETE FROM messages WHERE session = 'k' AND seq = (SELECT MAX(seq) FROM messages WHERE session = 'k')`,
		"a length too large":    `UPDATE sessions SET length = 4611686018427387904 WHERE session = 'k'`,
		"a length too small":    `UPDATE sessions SET length = 2 WHERE session = 'k'`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Append(ctx, "k", 0, sessiontest.Transcript()); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.ExecContext(ctx, damage); err != nil {
				t.Fatal(err)
			}
			got, err := s.Transcript(ctx, "k")
			if err == nil {
				t.Fatalf("Transcript returned %d messages of a damaged transcript", len(got))
			}
			for _, want := range []string{"state store " + path + ": ", "damaged"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not hold %q", err, want)
				}
			}
		})
	}
}
