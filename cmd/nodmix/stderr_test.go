package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestMCPServeOutlivesItsStderr: a client that closes the read end of nodmix's stderr (its log
// reader went away) does not end `nodmix -v mcp serve` at the next log line: the runtime kills a
// program whose write to descriptor 2 fails with EPIPE, unless the write goes through another.
func TestMCPServeOutlivesItsStderr(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGPIPE")
	}
	home := t.TempDir()
	cmd := exec.Command(binary, "-v", "mcp", "serve", "--mode", "direct")
	cmd.Env = baseEnv(home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // nobody reads stderr: every log line fails with EPIPE
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	replies, exited, waitErr := readReplies(stdout, cmd)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	for id, method := range []string{"initialize", "tools/list"} {
		params := map[string]any{}
		if method == "initialize" {
			params = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "stderr-test", "version": "1"}}
		}
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id + 1, "method": method, "params": params})
		if _, err := stdin.Write(append(line, '\n')); err != nil {
			t.Fatalf("write %s: %v", method, err)
		}
		m, ok := <-replies
		if !ok {
			<-exited
			t.Fatalf("nodmix mcp serve ended before answering %s: %v", method, *waitErr)
		}
		if m["result"] == nil {
			t.Fatalf("%s: %v", method, m)
		}
		if method == "tools/list" && !strings.Contains(string(mustJSON(m)), `"exec"`) {
			t.Errorf("tools/list without the exec tool: %v", m)
		}
		if method == "initialize" {
			line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
			_, _ = stdin.Write(append(line, '\n'))
		}
	}
}
