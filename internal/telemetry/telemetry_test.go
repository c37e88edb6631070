package telemetry_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
