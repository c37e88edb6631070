//go:build unix

package mcphub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/e2etest"
	"github.com/nodmix/nodmix/internal/leaktest"
)

// npmServer is e2etest.Server split into command and arguments.
func npmServer(dir, pkg string, args ...string) (string, []string) {
	argv := e2etest.Server(dir, pkg, args...)
	return argv[0], argv[1:]
}

func stdioServer(name, command string, args []string) ServerConfig {
	return ServerConfig{Name: name, Command: command, Args: args, Enabled: true}
}

// startHTTPEverything runs server-everything in streamable HTTP mode on a free loopback port and
// returns its /mcp URL. The process is killed at cleanup.
func startHTTPEverything(t *testing.T, dir string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	cmd, args := npmServer(dir, "server-everything", "streamableHttp")
	c := exec.Command(cmd, args...)
	c.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	c.Stdout, c.Stderr = io.Discard, io.Discard
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Process.Kill()
		_ = c.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr + "/mcp"
}

// processGone checks at cleanup that the hub left no server process behind.
func processGone(t *testing.T, h *Hub) {
	t.Helper()
	var pids []int
	t.Cleanup(func() {
		_ = h.Close()
		for _, pid := range pids {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("server process %d is still there after Close (kill -0: %v)", pid, err)
			}
		}
	})
	t.Cleanup(func() { // runs first: collect the pids while the hub still has them
		for _, s := range h.Status() {
			if s.PID > 0 {
				pids = append(pids, s.PID)
			}
		}
	})
}

// e2eHub is testHub for real servers, with slower restarts, and checks at cleanup that no server
// process is left.
func e2eHub(t *testing.T, opts Options, servers ...ServerConfig) (*Hub, *atomic.Int32) {
	t.Helper()
	if opts.TerminateGrace == 0 {
		opts.TerminateGrace = 2 * time.Second
	}
	if opts.Backoff == (Backoff{}) {
		opts.Backoff = Backoff{Initial: 100 * time.Millisecond, Max: time.Second, StableAfter: time.Hour}
	}
	h, notified := testHub(t, nil, opts, servers...)
	processGone(t, h)
	return h, notified
}

func findTool(h *Hub, id string) (catalog.Entry, bool) {
	tools := h.Tools()
	i := slices.IndexFunc(tools, func(e catalog.Entry) bool { return e.Tool.ID == id })
	if i < 0 {
		return catalog.Entry{}, false
	}
	return tools[i], true
}

func TestE2EAggregatesRealServers(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	url := startHTTPEverything(t, dir)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "note.txt"), []byte("hello from disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	evCmd, evArgs := npmServer(dir, "server-everything", "stdio")
	fsCmd, fsArgs := npmServer(dir, "server-filesystem", root)
	memCmd, memArgs := npmServer(dir, "server-memory")
	mem := stdioServer("memory", memCmd, memArgs)
	mem.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}
	h, notified := e2eHub(t, Options{},
		stdioServer("everything", evCmd, evArgs),
		stdioServer("filesystem", fsCmd, fsArgs),
		mem,
		ServerConfig{Name: "everything-http", URL: url, Headers: map[string]string{"X-Test": "secret-header-value"}, Enabled: true},
	)
	for _, name := range []string{"everything", "filesystem", "memory", "everything-http"} {
		waitState(t, h, name, StateReady)
	}
	// Notify runs right after a server's tools are in place, on the server's goroutine.
	waitFor(t, h, "one Notify per server", func() bool { return notified.Load() >= 4 })
	if _, err := catalog.NewSnapshot(1, h.Tools()); err != nil {
		t.Fatalf("tools of all servers do not make a snapshot: %v", err)
	}
	for _, id := range []string{"mcp:everything:echo", "mcp:everything-http:echo", "mcp:filesystem:read_text_file", "mcp:memory:create_entities"} {
		if _, ok := findTool(h, id); !ok {
			t.Errorf("tool %s missing", id)
		}
	}
	for _, st := range h.Status() {
		if st.Tools == 0 || st.LastError != "" {
			t.Errorf("status %+v", st)
		}
		if (st.Transport == "stdio") != (st.PID > 0) {
			t.Errorf("%s: transport %s with pid %d", st.Name, st.Transport, st.PID)
		}
		if strings.Contains(fmt.Sprint(st), "secret-header-value") {
			t.Errorf("status shows a header value: %+v", st)
		}
	}

	calls := []struct{ id, args, want string }{
		{"mcp:everything:echo", `{"message":"hello"}`, "Echo: hello"},
		{"mcp:everything-http:echo", `{"message":"over http"}`, "Echo: over http"},
		{"mcp:filesystem:read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "note.txt")), "hello from disk"},
		{"mcp:memory:create_entities", `{"entities":[{"name":"nodmix","entityType":"project","observations":["aggregates MCP servers"]}]}`, "nodmix"},
		{"mcp:memory:read_graph", `{}`, "aggregates MCP servers"},
	}
	for _, c := range calls {
		res, err := callByID(t, h, c.id, c.args)
		if err != nil || res.IsError || !strings.Contains(res.Text(), c.want) {
			t.Errorf("%s(%s) = %+v, %v; want text containing %q", c.id, c.args, res, err, c.want)
		}
	}

	// Prompts are namespaced; resources keep their URIs and know their server.
	prompts := h.Prompts()
	if !slices.ContainsFunc(prompts, func(p *mcp.Prompt) bool { return p.Name == "everything__simple-prompt" }) ||
		!slices.ContainsFunc(prompts, func(p *mcp.Prompt) bool { return p.Name == "everything-http__simple-prompt" }) {
		t.Errorf("prompts %v lack everything__simple-prompt", promptNames(prompts))
	}
	pr, err := h.GetPrompt(t.Context(), "everything__simple-prompt", nil)
	if err != nil || len(pr.Messages) == 0 {
		t.Errorf("GetPrompt = %v, %v", pr, err)
	}
	if _, err := h.GetPrompt(t.Context(), "everything__nope", nil); !errors.Is(err, ErrUnknownPrompt) {
		t.Errorf("unknown prompt: %v", err)
	}
	res := h.Resources()
	if len(res) == 0 {
		t.Fatal("no resources")
	}
	// everything and everything-http list the same URIs: the first server by name owns them.
	if server, _ := res[0].Meta[MetaServer].(string); server != "everything" {
		t.Errorf("resource %s belongs to %q", res[0].URI, server)
	}
	rr, err := h.ReadResource(t.Context(), res[0].URI)
	if err != nil || len(rr.Contents) == 0 {
		t.Errorf("ReadResource(%s) = %v, %v", res[0].URI, rr, err)
	}
}

func promptNames(ps []*mcp.Prompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func TestE2EListChangedAndCancel(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	log, logged := captureLog(t)
	fx := stdioServer("fx", "node", []string{filepath.Join(dir, "fixture-server.mjs")})
	fx.Env = map[string]string{"FIXTURE_SECRET": "env-secret-value"}
	h, notified := e2eHub(t, Options{Log: log}, fx)
	waitState(t, h, "fx", StateReady)
	// The server's stderr goes to the log, line by line, tagged with the server.
	waitFor(t, h, "the server's stderr in the log", func() bool {
		return strings.Contains(logged.String(), `msg="mcp server output" server=fx stream=stderr line="fixture server ready, pid`)
	})
	waitFor(t, h, "the masked secret in the log", func() bool {
		return strings.Contains(logged.String(), `line="my secret is ***"`)
	})
	if strings.Contains(logged.String(), "env-secret-value") {
		t.Error("the log shows an env value")
	}
	waitFor(t, h, "the first Notify", func() bool { return notified.Load() >= 1 })
	before, n := len(h.Tools()), notified.Load()

	if res, err := callByID(t, h, "mcp:fx:add_tool", `{"name":"fresh"}`); err != nil || res.IsError {
		t.Fatalf("add_tool = %v, %v", res, err)
	}
	waitFor(t, h, "the added tool", func() bool { _, ok := findTool(h, "mcp:fx:fresh"); return ok })
	// Notify runs just after the tools are installed, so it may lag the listing by a moment.
	waitFor(t, h, "Notify after list_changed", func() bool { return notified.Load() > n })
	if len(h.Tools()) != before+1 {
		t.Errorf("after list_changed: %d tools, had %d", len(h.Tools()), before)
	}
	if res, err := callByID(t, h, "mcp:fx:fresh", `{}`); err != nil || res.Text() != "I am fresh" {
		t.Errorf("call of the added tool = %v, %v", res, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := callByIDCtx(ctx, t, h, "mcp:fx:sleep", `{"ms":60000}`)
		errc <- err
	}()
	waitInflight(t, h, "fx", 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	waitFor(t, h, "the server to see the cancellation", func() bool {
		res, err := callByID(t, h, "mcp:fx:cancelled_count", `{}`)
		return err == nil && res.Text() == "1"
	})
}

// waitInflight waits until the fixture server runs n sleep calls.
func waitInflight(t *testing.T, h *Hub, server string, n int) {
	t.Helper()
	want := strconv.Itoa(n)
	waitFor(t, h, "a call in flight on "+server, func() bool {
		res, err := callByID(t, h, "mcp:"+server+":inflight", `{}`)
		return err == nil && res.Text() == want
	})
}

func TestE2EKilledServerRestarts(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	evCmd, evArgs := npmServer(dir, "server-everything", "stdio")
	h, _ := e2eHub(t, Options{},
		stdioServer("fx", "node", []string{filepath.Join(dir, "fixture-server.mjs")}),
		stdioServer("everything", evCmd, evArgs),
	)
	waitState(t, h, "fx", StateReady)
	waitState(t, h, "everything", StateReady)

	// Killed in the middle of a call: the call fails clearly, the hub restarts the server.
	pid := statusOf(h, "fx").PID
	errc := make(chan error, 1)
	go func() {
		_, err := callByID(t, h, "mcp:fx:sleep", `{"ms":60000}`)
		errc <- err
	}()
	waitInflight(t, h, "fx", 1)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	if !errors.Is(err, catalog.ErrUnavailable) ||
		!strings.Contains(err.Error(), `mcp server "fx": connection lost during call to tool "sleep"`) {
		t.Fatalf("in-flight call: %v, want a clear connection-lost error", err)
	}
	waitFor(t, h, "a new fx process", func() bool {
		st := statusOf(h, "fx")
		return st.State == StateReady && st.PID != pid
	})
	if res, err := callByID(t, h, "mcp:fx:echo", `{"message":"after restart"}`); err != nil || res.Text() != "echo: after restart" {
		t.Fatalf("call after restart = %v, %v", res, err)
	}

	// The same for a server from npm, killed between calls.
	pid = statusOf(h, "everything").PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, h, "a new everything process", func() bool {
		st := statusOf(h, "everything")
		return st.State == StateReady && st.PID != pid
	})
	if res, err := callByID(t, h, "mcp:everything:echo", `{"message":"after restart"}`); err != nil || res.Text() != "Echo: after restart" {
		t.Fatalf("call after restart = %v, %v", res, err)
	}
	for _, name := range []string{"fx", "everything"} {
		if st := statusOf(h, name); st.Restarts != 1 {
			t.Errorf("%s restarts = %d, want 1", name, st.Restarts)
		}
	}
}

func TestE2EStuckAndGarbageServers(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	fx := filepath.Join(dir, "fixture-server.mjs")
	h, _ := e2eHub(t, Options{ConnectTimeout: 5 * time.Minute, TerminateGrace: 500 * time.Millisecond, Backoff: Backoff{Initial: time.Hour}},
		stdioServer("stuck", "node", []string{"-e", "setInterval(() => {}, 1e6)"}),
		stdioServer("garbage", "node", []string{fx, "--garbage"}),
		stdioServer("fine", "node", []string{fx}),
	)
	waitState(t, h, "fine", StateReady)
	waitState(t, h, "garbage", StateDown)
	if st := statusOf(h, "stuck"); st.State != StateConnecting {
		t.Errorf("stuck server is %s, want still connecting", st.State)
	}
	if st := statusOf(h, "garbage"); !strings.Contains(st.LastError, "invalid character") {
		t.Errorf("garbage server's last error = %q", st.LastError)
	}
	if res, err := callByID(t, h, "mcp:fine:echo", `{"message":"unaffected"}`); err != nil || res.Text() != "echo: unaffected" {
		t.Errorf("call to the fine server = %v, %v", res, err)
	}

	// Garbage on stdout mid-session takes the server down too; the hub stays up.
	if _, err := callByID(t, h, "mcp:fine:garbage", `{}`); err != nil && !errors.Is(err, catalog.ErrUnavailable) {
		t.Errorf("garbage call: %v", err)
	}
	waitFor(t, h, "the fine server to restart", func() bool { return statusOf(h, "fine").Restarts >= 1 })
}

func BenchmarkProxyOverhead(b *testing.B) {
	dir := e2etest.Dir(b)
	evCmd, evArgs := npmServer(dir, "server-everything", "stdio")
	h := New(Options{Servers: []ServerConfig{stdioServer("everything", evCmd, evArgs)}, TerminateGrace: time.Second})
	if err := h.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	if err := h.WaitState(ctx, "everything", StateReady); err != nil {
		b.Fatal(err)
	}
	e, _ := findTool(h, "mcp:everything:echo")

	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(evCmd, evArgs...)}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	args := json.RawMessage(`{"message":"x"}`)
	var direct, hub time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := e.Exec.Execute(ctx, catalog.Call{Tool: &e.Tool, Args: args}); err != nil {
			b.Fatal(err)
		}
		direct += t1.Sub(t0)
		hub += time.Since(t1)
	}
	b.ReportMetric(float64(direct.Microseconds())/float64(b.N), "direct-µs/call")
	b.ReportMetric(float64(hub.Microseconds())/float64(b.N), "hub-µs/call")
	b.ReportMetric(float64(hub)/float64(direct), "ratio")
}

// TestE2EGrandchildrenEnd starts a server the way `npx` or a shell wrapper does, with a process
// of its own left behind as a grandchild of nodmix, and checks that closing the hub ends it too.
func TestE2EGrandchildrenEnd(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	script := `sleep 300 & echo $! > "$1"; exec node "$2"`
	fx := stdioServer("fx", "sh", []string{"-c", script, "sh", pidFile, filepath.Join(dir, "fixture-server.mjs")})
	h, _ := e2eHub(t, Options{}, fx)
	waitState(t, h, "fx", StateReady)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !running(pid) {
		t.Fatalf("the grandchild %d is not running before Close", pid)
	}
	_ = h.Close()
	waitFor(t, h, "the grandchild to end", func() bool { return !running(pid) })
}

// running reports whether pid is a live process; a zombie waiting for its new parent to reap
// it has ended.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil // no /proc: ask the kernel
	}
	// The state follows the command name, which is in parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
