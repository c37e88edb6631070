package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStatelessTurnsLeaveNoLogOfTheirOwn: a turn whose transcript is not kept (a stateless API
// call) logs to the shared stateless log; a kept session logs to its own.
func TestStatelessTurnsLeaveNoLogOfTheirOwn(t *testing.T) {
	a := persistentApp(t, `{agents: {defaults: {model: "scripted/demo"}}}`)
	ctx := context.Background()
	for _, req := range []TurnRequest{
		{Session: "gw-once", Ephemeral: true, Input: userText(`run exec {"command": ["true"]}`)},
		{Session: "kept", Input: userText(`run exec {"command": ["true"]}`)},
	} {
		if _, err := a.Turn(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	logs := filepath.Join(a.Home, "logs")
	entries, err := os.ReadDir(filepath.Join(logs, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	if diff := cmp.Diff([]string{"kept.jsonl"}, files); diff != "" {
		t.Errorf("session logs (-want +got):\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(logs, "stateless.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{"session":"gw-once","time"`) || !strings.Contains(string(b), `"tool":"nodmix:core:exec"`) {
		t.Errorf("stateless log:\n%s", b)
	}
}

// TestRawOutputsAreASessions: a raw output kept for a call of no session belongs to the session
// "default", under the retention of raw outputs, never to the app's own blobs, which are kept.
func TestRawOutputsAreASessions(t *testing.T) {
	a := persistentApp(t, `{}`)
	ctx := context.Background()
	raw := rawStore{a.Store}
	if _, err := a.Store.Append(ctx, "default", 0, userText("hi")); err != nil {
		t.Fatal(err)
	}
	if err := raw.Put(ctx, "", "h1", []byte("output")); err != nil {
		t.Fatal(err)
	}
	if b, err := raw.Get(ctx, "h1"); err != nil || string(b) != "output" {
		t.Fatalf("get: %q %v", b, err)
	}
	if err := a.Store.DeleteSession(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Get(ctx, "h1"); err == nil {
		t.Error("the raw output outlived its session")
	}
}
