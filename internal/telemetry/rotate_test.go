package telemetry

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// readLog returns the call ids of a session log's lines, failing on a line that is not JSON.
func readLog(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			CallID string `json:"call_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Bytes(), err)
		}
		ids = append(ids, line.CallID)
	}
	return ids
}

// A busy session's log does not grow without bound: past the cap it is moved aside once, and
// the older generation is dropped at the next move.
func TestSessionLogIsBounded(t *testing.T) {
	dir := t.TempDir()
	r := New(dir, nil)
	r.maxBytes = 2000
	defer r.Close()
	var all []string
	for i := range 100 {
		id := fmt.Sprintf("c%03d", i)
		all = append(all, id)
		r.Observe(dispatch.Event{Session: "busy", CallID: id, ToolID: "t", Outcome: "ok"})
	}
	path := filepath.Join(dir, "sessions", "busy.jsonl")
	sizes := checkBounded(t, r, path)
	// What is kept is the latest calls, whole and in order.
	kept := append(readLog(t, path+".1"), readLog(t, path)...)
	if len(kept) == 0 || len(kept) == len(all) {
		t.Fatalf("kept %d of %d calls, in %d bytes", len(kept), len(all), sizes)
	}
	if diff := cmp.Diff(all[len(all)-len(kept):], kept); diff != "" {
		t.Errorf("kept calls (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sessions"))
	if len(entries) != 2 {
		t.Errorf("%d files, want the log and one older generation", len(entries))
	}
}

// The cap holds also when more sessions are busy than logs are kept open, so that every write
// reopens its log.
func TestSessionLogIsBoundedWhenReopened(t *testing.T) {
	dir := t.TempDir()
	r := New(dir, nil)
	r.maxBytes = 2000
	defer r.Close()
	for round := range 30 {
		for s := range maxOpenLogs + 1 {
			r.Observe(dispatch.Event{Session: fmt.Sprint("s", s), CallID: fmt.Sprint("c", round), ToolID: "t", Outcome: "ok"})
		}
	}
	path := filepath.Join(dir, "sessions", "s0.jsonl")
	checkBounded(t, r, path)
	if got := readLog(t, path); len(got) == 0 || got[len(got)-1] != "c29" {
		t.Errorf("latest log ends with %v, want the last call c29", got)
	}
}

// checkBounded fails t unless the log at path and its older generation both exist within the
// cap of r, and returns their sizes together.
func checkBounded(t *testing.T, r *Recorder, path string) int64 {
	t.Helper()
	var sizes int64
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > r.maxBytes {
			t.Errorf("%s is %d bytes, over the cap of %d", p, st.Size(), r.maxBytes)
		}
		sizes += st.Size()
	}
	return sizes
}
