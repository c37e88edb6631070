package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKilledNodmixLeavesNoCommand: after SIGKILL of nodmix, which can clean nothing up, the
// command a model was running is gone within a second instead of living on under init.
func TestKilledNodmixLeavesNoCommand(t *testing.T) {
	work := t.TempDir()
	pidFile := filepath.Join(work, "pid")
	cmd := exec.Command(binary, "tools", "call", "bash", "--args",
		`{"command":"echo $$ > `+pidFile+`.tmp && mv `+pidFile+`.tmp `+pidFile+` && exec sleep 300"}`)
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + work, "NODMIX_HOME=" + filepath.Join(work, ".nodmix"), "PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var sleep int
	for deadline := time.Now().Add(time.Minute); sleep == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start:\n%s", stderr.String())
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			sleep, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	t.Cleanup(func() { _ = syscall.Kill(sleep, syscall.SIGKILL) })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	for processAlive(sleep) {
		if time.Since(killed) > time.Second {
			t.Fatalf("sleep (pid %d) still runs a second after nodmix was killed", sleep)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processAlive reports whether pid runs; a zombie waiting to be reaped by init has ended.
func processAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
