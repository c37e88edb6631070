package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sqlite"
)

// The environment of a helper process: the store's path, the writer's name and its number of
// turns (turns when unset).
const (
	envPath   = "NODMIX_SQLITE_WRITER_PATH"
	envWriter = "NODMIX_SQLITE_WRITER"
	envTurns  = "NODMIX_SQLITE_WRITER_TURNS"
	turns     = 50
)

// writeTurns is one writer, as a gateway or a `nodmix agent --session` run: turns of two
// messages on its own session and on one every writer shares, and a counter per turn.
func writeTurns(ctx context.Context, s session.Store, writer string, n int) error {
	turn := func(key string, i int) error {
		msgs := []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: fmt.Sprintf("%s %d question", writer, i)}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindText, Text: fmt.Sprintf("%s %d answer", writer, i)}}},
		}
		for {
			tr, err := s.Transcript(ctx, key)
			if err != nil && !errors.Is(err, session.ErrNotFound) {
				return err
			}
			_, err = s.Append(ctx, key, len(tr), msgs)
			if errors.Is(err, session.ErrConflict) {
				continue // another writer's turn came first: build on it
			}
			return err
		}
	}
	for i := range n {
		if err := turn("own-"+writer, i); err != nil {
			return fmt.Errorf("%s: own turn %d: %w", writer, i, err)
		}
		if err := turn("shared", i); err != nil {
			return fmt.Errorf("%s: shared turn %d: %w", writer, i, err)
		}
		if _, err := s.Update(ctx, "shared", func(in *session.Info) error { in.Counters[writer]++; return nil }); err != nil {
			return fmt.Errorf("%s: update %d: %w", writer, i, err)
		}
	}
	return nil
}

// wholeTurns checks that msgs are turns of writeTurns, each whole, each writer's in order.
func wholeTurns(msgs []llm.Message) error {
	if len(msgs)%2 != 0 {
		return fmt.Errorf("%d messages: a torn turn", len(msgs))
	}
	next := map[string]int{}
	for i := 0; i < len(msgs); i += 2 {
		var w string
		var n int
		q, a := msgs[i].Text(), msgs[i+1].Text()
		if _, err := fmt.Sscanf(q, "%s %d question", &w, &n); err != nil || a != fmt.Sprintf("%s %d answer", w, n) || n != next[w] {
			return fmt.Errorf("messages %d and %d: %q, %q: a torn or lost turn", i, i+1, q, a)
		}
		next[w]++
	}
	return nil
}

// TestWriterProcess is the helper process of TestTwoProcessesWrite; alone it does nothing.
func TestWriterProcess(t *testing.T) {
	path, writer := os.Getenv(envPath), os.Getenv(envWriter)
	if path == "" {
		t.Skip("helper process")
	}
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := turns
	if v := os.Getenv(envTurns); v != "" {
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeTurns(ctx, s, writer, n); err != nil {
		t.Fatal(err)
	}
}

// Processes sharing one state.db (a gateway and `nodmix agent --session` runs), all creating it
// at once, lose no write, tear no turn and see no "database is locked".
func TestTwoProcessesWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	writers := []string{"p0", "p1", "p2"}
	cmds := make([]*exec.Cmd, len(writers))
	outs := make([]bytes.Buffer, len(writers))
	for i, w := range writers {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1", "-test.v")
		cmds[i].Env = append(os.Environ(), envPath+"="+path, envWriter+"="+w)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer %s: %v\n%s", writers[i], err, outs[i].String())
		}
	}
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	shared, err := s.Transcript(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(shared) != 2*turns*len(writers) {
		t.Errorf("shared transcript has %d messages, want %d", len(shared), 2*turns*len(writers))
	}
	if err := wholeTurns(shared); err != nil {
		t.Error(err)
	}
	info, err := s.Session(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range writers {
		if info.Counters[w] != turns {
			t.Errorf("counter of %s = %d, want %d", w, info.Counters[w], turns)
		}
		own, err := s.Transcript(ctx, "own-"+w)
		if err != nil || len(own) != 2*turns {
			t.Errorf("own session of %s: %d messages, %v", w, len(own), err)
		}
	}
}

// A writer killed in the middle of its turns leaves a sound file holding whole turns.
func TestKilledWriterLeavesWholeTurns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envPath+"="+path, envWriter+"=p0", envTurns+"=100000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if in, err := s.Session(ctx, "shared"); err == nil && in.Messages >= 40 {
			break
		}
		if i == 10000 {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatal("the writer wrote nothing")
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // killed: its error is the signal
	var check string
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v", check, err)
	}
	for _, key := range []string{"shared", "own-p0"} {
		tr, err := s.Transcript(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := wholeTurns(tr); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
}
