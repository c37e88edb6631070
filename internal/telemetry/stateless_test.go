package telemetry_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/telemetry"
)

// A stateless session (an API call whose transcript nothing keeps) logs to the one shared
// stateless log, each line naming its session, instead of leaving a file of its own behind;
// once released, the session logs to its own file again.
func TestStatelessSessionsShareOneLog(t *testing.T) {
	dir := t.TempDir()
	r := telemetry.New(dir, nil)
	for _, s := range []string{"gw-a", "gw-b"} {
		release := r.Stateless(s)
		r.Observe(dispatch.Event{Time: time.Unix(0, 0), Session: s, ToolID: "nodmix:core:exec", Outcome: "ok"})
		r.Write(s, struct {
			Type string `json:"type"`
		}{"model"})
		r.Write(s, struct{}{})
		release()
		release() // a second release changes nothing
	}
	hold := r.Stateless("gw-c")
	r.Stateless("gw-c")() // nested marks: gw-c stays stateless while one holds
	r.Write("gw-c", struct{}{})
	hold()
	r.Write("gw-a", struct{}{}) // released: its own log
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	if diff := cmp.Diff([]string{"gw-a.jsonl"}, files); diff != "" {
		t.Errorf("session logs (-want +got):\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(dir, telemetry.StatelessLog))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var v struct{ Session, Type string }
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, v.Session+" "+v.Type)
	}
	want := []string{"gw-a call", "gw-a model", "gw-a ", "gw-b call", "gw-b model", "gw-b ", "gw-c "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stateless log (-want +got):\n%s", diff)
	}
}
