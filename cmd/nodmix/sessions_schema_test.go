package main_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // to write the version a newer nodmix would
)

// A state.db a newer nodmix wrote (its schema version above this build's) is refused by every
// command that opens it, gateway included, with the file and the versions named, and not one
// byte of it changes: a downgrade never "migrates" the user's sessions down.
func TestNewerStateDBIsRefused(t *testing.T) {
	home := t.TempDir()
	env := baseEnv(home)
	if _, errOut, code := run(t, env, "", "agent", "--session", "k", "-m", "hello", "--model", "scripted/demo"); code != 0 {
		t.Fatalf("first turn: exit %d\n%s", code, errOut)
	}
	path := filepath.Join(home, "state.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 9`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"sessions", "list"},
		{"sessions", "rm", "k"},
		{"agent", "--session", "k", "-m", "again", "--model", "scripted/demo"},
		{"gateway", "--listen", "127.0.0.1:0"},
	} {
		cmd := exec.CommandContext(ctx, binary, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil {
			t.Errorf("%v accepted the newer state.db", args)
			continue
		}
		for _, want := range []string{"state store " + path + ": ", "newer than this nodmix knows", "version 9"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("%v: stderr %q does not hold %q", args, stderr.String(), want)
			}
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("the refused state.db changed")
	}
}
