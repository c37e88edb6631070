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

// TestCommandsCannotReadWithheldKeys: a command a model runs gets nodmix's environment without
// the keys, and cannot read them from nodmix's own /proc entry either. Root reads every process's
// entries whatever they allow, so as root the test runs nodmix as nobody.
func TestCommandsCannotReadWithheldKeys(t *testing.T) {
	work, err := os.MkdirTemp("", "nodmix-environ-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	bin := binary
	attr := &syscall.SysProcAttr{}
	if os.Geteuid() == 0 {
		if err := os.Chmod(work, 0o777); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(binary)
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(work, "nodmix")
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		attr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	const key = "sk-withheld-FAKE-0123456789"
	cmd := exec.Command(bin, "tools", "call", "bash", "--args",
		`{"command":"echo env: $OPENAI_API_KEY; tr '\\000' '\\n' < /proc/$PPID/environ; echo done"}`)
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + work, "NODMIX_HOME=" + filepath.Join(work, ".nodmix"), "PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=" + key}
	cmd.SysProcAttr = attr
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "done") {
		t.Fatalf("the command did not run:\n%s", out)
	}
	if strings.Contains(string(out), key) {
		t.Errorf("the command read the withheld key:\n%s", out)
	}
}
