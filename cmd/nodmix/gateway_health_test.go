package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestGatewayHealthAndServers: /healthz names a server that is down and reads degraded (200);
// `nodmix mcp servers` asks the running gateway instead of starting copies of the servers; a
// second gateway on the same port fails with one line before it starts anything.
func TestGatewayHealthAndServers(t *testing.T) {
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	// A server that works (nodmix itself) leaves a line in starts.log each time it starts.
	starts := filepath.Join(work, "starts.log")
	inner := fmt.Sprintf(`echo started >> %s; exec %s mcp serve`, starts, binary)
	cfg := fmt.Sprintf(`{
  gateway: {listen: %q},
  mcp: {servers: {
    broken: {command: "sh", args: ["-c", "echo 'cannot find module' >&2; exit 3"]},
    inner: {command: "sh", args: ["-c", %q], env: {NODMIX_HOME: %q}},
    off: {command: "true", enabled: false},
  }},
}`, addr, inner, filepath.Join(work, "inner-home"))
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := baseEnv(home)
	gw := exec.Command(binary, "gateway")
	gw.Env = env
	var gwErr syncBuffer // written by the process's copier while the test reads it
	gw.Stdout, gw.Stderr = &gwErr, &gwErr
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = gw.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = gw.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = gw.Process.Kill()
			<-done
			t.Errorf("gateway did not stop on SIGINT:\n%s", gwErr.String())
		}
	})

	// The banner comes once the port is bound: whoever reads it can connect.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(gwErr.String(), "listening on http://"+addr) {
		if time.Now().After(deadline) {
			t.Fatalf("no banner:\n%s", gwErr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	type serverHealth struct {
		State     string `json:"state"`
		Tools     int    `json:"tools"`
		LastError string `json:"lastError"`
	}
	var health struct {
		Status  string                  `json:"status"`
		Servers map[string]serverHealth `json:"servers"`
	}
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatalf("/healthz right after the banner: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz = %d %s, want 200 (degraded is still serving)", resp.StatusCode, body)
		}
		if err := json.Unmarshal(body, &health); err != nil {
			t.Fatalf("/healthz body %s: %v", body, err)
		}
		if health.Servers["broken"].State == "down" && health.Servers["inner"].State == "ready" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if health.Status != "degraded" || health.Servers["broken"].State != "down" || health.Servers["broken"].LastError == "" {
		t.Errorf("/healthz with a server down = %+v", health)
	}
	if diff := cmp.Diff(serverHealth{State: "disabled"}, health.Servers["off"]); diff != "" {
		t.Errorf("disabled server in /healthz (-want +got):\n%s", diff)
	}
	if h := health.Servers["inner"]; h.State != "ready" || h.Tools == 0 || h.LastError != "" {
		t.Errorf("working server in /healthz = %+v", h)
	}

	// nodmix mcp servers shows the gateway's servers and starts none of its own.
	before, _ := os.ReadFile(starts)
	out, stderr, code := run(t, env, "", "mcp", "servers")
	if code != 0 {
		t.Fatalf("mcp servers: exit %d\n%s", code, stderr)
	}
	if !strings.HasPrefix(out, "The servers of the gateway at http://"+addr+":\n") || !strings.Contains(out, "broken") || !strings.Contains(out, "cannot find module") {
		t.Errorf("mcp servers output:\n%s", out)
	}
	jsonOut, _, _ := run(t, env, "", "mcp", "servers", "--json")
	var st []struct{ Name, State string }
	if err := json.Unmarshal([]byte(jsonOut), &st); err != nil || len(st) != 3 || st[0].Name != "broken" || st[0].State != "down" || st[1].State != "ready" {
		t.Errorf("mcp servers --json = %s (%v)", jsonOut, err)
	}
	if after, _ := os.ReadFile(starts); !bytes.Equal(before, after) || !bytes.Equal(after, []byte("started\n")) {
		t.Errorf("starts of the working server: %q before mcp servers, %q after (want one, the gateway's)", before, after)
	}

	// A second gateway on the same port: one line, exit 1, and no server started.
	other := filepath.Join(work, "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(work, "other-started")
	otherCfg := fmt.Sprintf(`{gateway: {listen: %q}, mcp: {servers: {s: {command: "sh", args: ["-c", "touch %s; sleep 30"]}}}}`, addr, marker)
	if err := os.WriteFile(filepath.Join(other, "nodmix.json5"), []byte(otherCfg), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, stderr, code = run(t, baseEnv(other), "", "gateway")
	want := "nodmix: listen on " + addr + ": address already in use: another process (another gateway?) listens there; stop it or choose another address with --listen or gateway.listen\n"
	if code != 1 || stderr != want {
		t.Errorf("second gateway: exit %d, stderr %q; want 1, %q", code, stderr, want)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the second gateway took %s to fail", took)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the second gateway started its servers before finding the port busy")
	}
}

// TestGatewayAddressErrors: a malformed --listen is a usage error that says what the address must
// be; only a non-loopback address without a token points at gateway.auth.token.
func TestGatewayAddressErrors(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		listen string
		code   int
		stderr string
	}{
		{"8787", 2, `nodmix: --listen "8787": must be host:port (for example 127.0.0.1:8787)` + "\n"},
		{"0.0.0.0:0", 1, `nodmix: listen address "0.0.0.0:0": a bearer token is required to listen on a non-loopback address: set gateway.auth.token, or listen on loopback (127.0.0.1:8787)` + "\n"},
	}
	for _, tt := range tests {
		_, stderr, code := run(t, baseEnv(home), "", "gateway", "--listen", tt.listen)
		if code != tt.code || stderr != tt.stderr {
			t.Errorf("gateway --listen %s: exit %d, stderr %q; want %d, %q", tt.listen, code, stderr, tt.code, tt.stderr)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
