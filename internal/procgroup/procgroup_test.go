//go:build unix

package procgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillReachesGrandchildren starts a shell that leaves a grandchild behind, and checks that
// killing the group ends it, and that killing a group that is gone is not an error.
func TestKillReachesGrandchildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("sh", "-c", `sleep 300 & echo $! > "$1"; wait`, "sh", pidFile)
	Own(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var grandchild int
	for deadline := time.Now().Add(10 * time.Second); grandchild == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shell did not write its child's pid")
		}
		b, _ := os.ReadFile(pidFile)
		if s := strings.TrimSpace(string(b)); s != "" && strings.HasSuffix(string(b), "\n") {
			grandchild, _ = strconv.Atoi(s)
		}
	}
	if err := Kill(cmd.Process.Pid); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	_ = cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); alive(grandchild); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d outlived the group kill", grandchild)
		}
	}
	if err := Kill(cmd.Process.Pid); err != nil {
		t.Errorf("Kill of a group that is gone: %v", err)
	}
}

// alive reports whether pid runs; a zombie waiting for its new parent has ended.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
