package telemetry_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/telemetry"
)

func TestSessionLog(t *testing.T) {
	dir := t.TempDir()
	r := telemetry.New(dir, nil)
	r.Observe(dispatch.Event{Time: time.Unix(0, 0), Session: "s1", Surface: "mcp", ToolID: "mcp:gh:x", Source: catalog.SourceMCP, Outcome: "ok", ArgsBytes: 2, ResultBytes: 10})
	r.Observe(dispatch.Event{Time: time.Unix(0, 0), Session: "s1", Surface: "mcp", ToolID: "nodmix:core:exec", Source: catalog.SourceBuiltin, Outcome: "error"})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "sessions", "s1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tools []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		tools = append(tools, line["tool"].(string)+"/"+line["source"].(string)+"/"+line["outcome"].(string))
	}
	if diff := cmp.Diff([]string{"mcp:gh:x/mcp/ok", "nodmix:core:exec/builtin/error"}, tools); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	c := r.Counters()
	if c.Calls["ok"] != 1 || c.Calls["error"] != 1 || c.BySource["mcp"] != 1 || c.ResultBytes != 10 {
		t.Errorf("counters = %+v", c)
	}
}

func TestFileNameNeverEscapes(t *testing.T) {
	for _, id := range []string{"../../etc/passwd", "a/b", "..", "", strings.Repeat("x", 200), "ok-id_1.2"} {
		name := telemetry.FileName(id)
		if strings.ContainsAny(name, "/\\") || name == ".." || !strings.HasSuffix(name, ".jsonl") {
			t.Errorf("FileName(%q) = %q", id, name)
		}
	}
	if got := telemetry.FileName("ok-id_1.2"); got != "ok-id_1.2.jsonl" {
		t.Errorf("safe id changed: %q", got)
	}
}

func TestManySessionsKeepFewFilesOpen(t *testing.T) {
	dir := t.TempDir()
	r := telemetry.New(dir, nil)
	defer r.Close()
	for i := range 200 {
		r.Observe(dispatch.Event{Session: fmt.Sprintf("s%d", i), ToolID: "t", Outcome: "ok"})
	}
	r.Observe(dispatch.Event{Session: "s0", ToolID: "t", Outcome: "ok"}) // reopened after eviction
	b, err := os.ReadFile(filepath.Join(dir, "sessions", "s0.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Errorf("s0 has %d lines, want 2", n)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sessions"))
	if len(entries) != 200 {
		t.Errorf("%d session logs, want 200", len(entries))
	}
}

// A model may name a tool that does not exist with a name of any length; its call is logged
// with the name cut short, so one call cannot write a line of megabytes.
func TestUnknownToolNameIsClipped(t *testing.T) {
	dir := t.TempDir()
	r := telemetry.New(dir, nil)
	defer r.Close()
	snap, err := catalog.NewSnapshot(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &dispatch.Pipeline{Observers: []dispatch.Observer{r}}
	name := "é" + strings.Repeat("x", 1<<20)
	if _, err := p.Call(t.Context(), snap, dispatch.Request{Target: name, Session: "s", Surface: "tool_call"}); !errors.Is(err, dispatch.ErrUnknownTool) {
		t.Fatalf("call: %v, want ErrUnknownTool", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sessions", "s.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 4096 {
		t.Errorf("one call wrote a %d-byte line", len(b))
	}
	var line struct{ Tool, Outcome string }
	if err := json.Unmarshal(b, &line); err != nil {
		t.Fatalf("line %.200q: %v", b, err)
	}
	if line.Outcome != "unknown" || !strings.HasPrefix(name, strings.TrimSuffix(line.Tool, "…")) || !utf8.ValidString(line.Tool) {
		t.Errorf("logged tool %q, outcome %q; want a valid prefix of the name, outcome unknown", line.Tool, line.Outcome)
	}
}

// Sessions whose ids differ only in case log to files whose names differ in more than case: on a
// file system that ignores case they would be one file.
func TestFileNamesDifferBeyondCase(t *testing.T) {
	ids := []string{"chat", "Chat", "CHAT", "a-B.c", "a-b.c", "default", "Default", "s-0123456789abcdef", "S-0123456789ABCDEF"}
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			if fa, fb := telemetry.FileName(a), telemetry.FileName(b); strings.EqualFold(fa, fb) {
				t.Errorf("sessions %q and %q log to %s and %s", a, b, fa, fb)
			}
		}
	}
	if got := telemetry.FileName("chat"); got != "chat.jsonl" {
		t.Errorf("FileName(chat) = %q, want the id itself", got)
	}
}

// A client may choose as its session id the file name another session's id hashes to; the two
// must still log to two files.
func TestFileNameOfAHashedNameDiffers(t *testing.T) {
	for _, id := range []string{"a/b", "../x", strings.Repeat("y", 81), "é"} {
		hashed := telemetry.FileName(id)
		lookalike := strings.TrimSuffix(hashed, ".jsonl")
		if got := telemetry.FileName(lookalike); got == hashed {
			t.Errorf("sessions %q and %q both log to %s", id, lookalike, got)
		}
	}
}
