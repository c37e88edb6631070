package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shutdownLimit is how soon `nodmix mcp serve` must be gone after SIGTERM or SIGINT.
const shutdownLimit = time.Second

// readReplies reads the JSON-RPC answers (the messages with an id) that `nodmix mcp serve`
// writes to stdout, and then waits for cmd: exited is closed once it has, with *waitErr what
// Wait returned.
func readReplies(stdout io.Reader, cmd *exec.Cmd) (replies <-chan map[string]any, exited <-chan struct{}, waitErr *error) {
	out, done := make(chan map[string]any, 16), make(chan struct{})
	waitErr = new(error)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["id"] != nil {
				out <- m
			}
		}
		close(out)
		*waitErr = cmd.Wait()
		close(done)
	}()
	return out, done, waitErr
}

// readPID waits for a file holding a process id and returns the id.
func readPID(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		data, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process id in %s", file)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone reports whether pid has ended: no such process, or a zombie waiting to be reaped by
// whatever adopted it.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses: "1234 (sleep) Z ...".
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// TestMCPServeEndsOnSignal: with its client holding stdin open, `nodmix mcp serve` exits within
// a second of SIGTERM or SIGINT, and takes with it the command it was running and its
// downstream server with everything that server started.
func TestMCPServeEndsOnSignal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads process states from /proc")
	}
	tests := []struct {
		name       string
		sig        syscall.Signal
		grandchild bool // the server's wrapper leaves a background child, as some wrapper scripts do
		limit      time.Duration
	}{
		{"SIGTERM", syscall.SIGTERM, false, shutdownLimit},
		{"SIGINT", syscall.SIGINT, false, shutdownLimit},
		// The hub waits up to its terminate grace (5 s) for the stderr of a server that has
		// exited while a child of it keeps stderr open, before it kills the group.
		{"SIGTERM with a grandchild", syscall.SIGTERM, true, shutdownLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			home := filepath.Join(work, "home")
			downHome := filepath.Join(work, "downstream-home")
			for _, d := range []string{home, downHome} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			// The downstream server is nodmix itself behind a shell wrapper.
			wrapper := fmt.Sprintf(`echo $$ > %s/server.pid; exec %s mcp serve`, work, binary)
			pidFiles := []string{"command", "server"}
			if tt.grandchild {
				wrapper = fmt.Sprintf(`sleep 300 & echo $! > %s/grandchild.pid; `, work) + wrapper
				pidFiles = append(pidFiles, "grandchild")
			}
			// The binary is built with -race, whose runtime sleeps a second at exit unless told not to.
			const noRaceSleep = "atexit_sleep_ms=0"
			cfg := fmt.Sprintf(`{mcp: {servers: {inner: {command: "sh", args: ["-c", %q], env: {NODMIX_HOME: %q, GORACE: %q}}}}}`, wrapper, downHome, noRaceSleep)
			if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, "mcp", "serve", "--mode", "direct")
			cmd.Env = append(baseEnv(home), "GORACE="+noRaceSleep)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close() // held open until the test ends
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			replies, exited, _ := readReplies(stdout, cmd)
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
					for range replies {
					}
					<-exited
				}
			})
			id := 0
			call := func(method string, params map[string]any) map[string]any {
				t.Helper()
				id++
				line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
				if _, err := stdin.Write(append(line, '\n')); err != nil {
					t.Fatal(err)
				}
				for m := range replies {
					if m["id"] == float64(id) {
						return m
					}
				}
				t.Fatalf("no reply to %s; stderr:\n%s", method, stderr.String())
				return nil
			}
			call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "signal-test", "version": "1"}})
			line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
			_, _ = stdin.Write(append(line, '\n'))
			// Wait for the downstream server to be up: its tools are listed.
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(fmt.Sprint(call("tools/list", nil)), "mcp__inner__bash") {
				if time.Now().After(deadline) {
					t.Fatalf("the downstream server never connected; stderr:\n%s", stderr.String())
				}
				time.Sleep(100 * time.Millisecond)
			}
			// A command that runs until it is killed; its reply never comes.
			id++
			line, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{
				"name": "bash", "arguments": map[string]any{"command": fmt.Sprintf("echo $$ > %s/command.pid; exec sleep 300", work)}}})
			if _, err := stdin.Write(append(line, '\n')); err != nil {
				t.Fatal(err)
			}
			pids := map[string]int{}
			for _, name := range pidFiles {
				pids[name] = readPID(t, filepath.Join(work, name+".pid"))
			}

			start := time.Now()
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("nodmix mcp serve still runs 30s after %s\nstderr:\n%s", tt.sig, stderr.String())
			}
			took := time.Since(start)
			t.Logf("exited %s after %s", took.Round(time.Millisecond), tt.sig)
			if took > tt.limit {
				t.Errorf("nodmix mcp serve took %s to exit after %s, want at most %s", took.Round(time.Millisecond), tt.sig, tt.limit)
			}
			if strings.Contains(stderr.String(), "panic") {
				t.Errorf("stderr:\n%s", stderr.String())
			}
			// Whatever is left was adopted by init; give it a moment to be reaped.
			deadline = time.Now().Add(2 * time.Second)
			for name, pid := range pids {
				for !gone(pid) && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if !gone(pid) {
					t.Errorf("the %s (pid %d) outlived nodmix", name, pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}
