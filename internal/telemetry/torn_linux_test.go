package telemetry

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// tornChild is the variable that makes this test binary the child of TestTornLineStaysAlone.
const tornChild = "TELEMETRY_TORN_LINE_DIR"

// A write cut short (the disk filled up) leaves part of a line; once there is room again, the
// next line starts on a line of its own rather than after the fragment, where it would be lost
// with it. The child process runs under a file size limit, which cuts its second and last writes.
func TestTornLineStaysAlone(t *testing.T) {
	if dir := os.Getenv(tornChild); dir != "" {
		tornLineChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTornLineStaysAlone$", "-test.count=1")
	cmd.Env = append(os.Environ(), tornChild+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	// The child's last line was cut too; a recorder that opens the log afterwards sees it.
	r := New(dir, nil)
	r.Observe(dispatch.Event{Session: "s", CallID: "c5", ToolID: "t", Outcome: "ok"})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sessions", "s.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var whole []string
	for _, l := range lines {
		var line struct {
			CallID string `json:"call_id"`
		}
		if json.Unmarshal([]byte(l), &line) == nil {
			whole = append(whole, line.CallID)
		}
	}
	if diff := cmp.Diff([]string{"c1", "c3", "c5"}, whole); diff != "" {
		t.Errorf("whole lines of %q (-want +got):\n%s", b, diff)
	}
}

func tornLineChild(dir string) {
	r := New(dir, nil)
	defer r.Close()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		panic(err)
	}
	saved := lim
	r.Observe(dispatch.Event{Session: "s", CallID: "c1", ToolID: "t", Outcome: "ok"})
	st, err := os.Stat(filepath.Join(dir, "sessions", "s.jsonl"))
	if err != nil {
		panic(err)
	}
	lim.Cur = uint64(st.Size()) + 20 // room for part of the next line only
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		panic(err)
	}
	r.Observe(dispatch.Event{Session: "s", CallID: "c2", ToolID: "t", Outcome: "ok"})
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &saved); err != nil {
		panic(err)
	}
	r.Observe(dispatch.Event{Session: "s", CallID: "c3", ToolID: "t", Outcome: "ok"})
	st, err = os.Stat(filepath.Join(dir, "sessions", "s.jsonl"))
	if err != nil {
		panic(err)
	}
	lim.Cur = uint64(st.Size()) + 20
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		panic(err)
	}
	r.Observe(dispatch.Event{Session: "s", CallID: "c4", ToolID: "t", Outcome: "ok"})
}
