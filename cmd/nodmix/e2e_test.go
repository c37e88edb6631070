package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/e2etest"
)

// End-to-end tests of the built binary as an MCP server, driven by the official TypeScript SDK
// client (testdata/e2e/client.mjs) against real MCP servers from npm. `make test` installs them.

// e2eHome writes a nodmix config with the three npm servers (everything, memory, filesystem), the
// fake 36-tool catalog and extra settings, and returns the NODMIX_HOME.
func e2eHome(t *testing.T, dir string, extra string) string {
	t.Helper()
	home := t.TempDir()
	files := t.TempDir()
	if err := os.WriteFile(filepath.Join(files, "hello.txt"), []byte("hello from the filesystem server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	server := func(argv []string) string {
		args, _ := json.Marshal(argv[1:])
		return fmt.Sprintf(`{command: %q, args: %s}`, argv[0], args)
	}
	// The memory server keeps its graph in a file; each test gets its own.
	memory := strings.TrimSuffix(server(e2etest.Server(dir, "server-memory")), "}") +
		fmt.Sprintf(`, env: {MEMORY_FILE_PATH: %q}}`, filepath.Join(home, "memory.jsonl"))
	cfg := fmt.Sprintf(`{
  // written by the end-to-end test
  mcp: {
    servers: {
      everything: %s,
      memory: %s,
      filesystem: %s,
      fake: %s,
    },
  },
  %s
}
`, server(e2etest.Server(dir, "server-everything", "stdio")), memory,
		server(e2etest.Server(dir, "server-filesystem", files)), server([]string{"node", filepath.Join(dir, "fake-catalog.mjs"), "36"}), extra)
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// clientResult is what client.mjs prints.
type clientResult struct {
	ServerInfo struct {
		Name string `json:"name"`
	} `json:"serverInfo"`
	Results []struct {
		Op     string          `json:"op"`
		OK     bool            `json:"ok"`
		Error  json.RawMessage `json:"error"`
		Tools  []clientTool    `json:"tools"`
		Result json.RawMessage `json:"result"`
		Count  int             `json:"count"`
	} `json:"results"`
}

type clientTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// runClient runs client.mjs with steps against a server (--stdio ARGV or --url URL).
func runClient(t *testing.T, dir string, env []string, steps []map[string]any, target ...string) *clientResult {
	t.Helper()
	in, _ := json.Marshal(steps)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(dir, "client.mjs")}, target...)...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("client: %v\nstderr:\n%s\nstdout:\n%s", err, errb.String(), out.String())
	}
	var res clientResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("client output: %v\n%s", err, out.String())
	}
	if len(res.Results) != len(steps) {
		t.Fatalf("client ran %d of %d steps: %s", len(res.Results), len(steps), out.String())
	}
	return &res
}

func names(tools []clientTool) map[string]bool {
	m := map[string]bool{}
	for _, t := range tools {
		m[t.Name] = true
	}
	return m
}

func text(raw json.RawMessage) string {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(raw, &r)
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	s := strings.Join(parts, "\n")
	if r.IsError {
		s = "ERROR: " + s
	}
	return s
}

func baseEnv(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "NODMIX_HOME=" + home}
}

func TestE2EStdioDiscovery(t *testing.T) {
	dir := e2etest.Dir(t)
	home := e2eHome(t, dir, `tools: { deny: ["mcp:memory:delete_*"] },`)
	steps := []map[string]any{
		{"op": "tools"},
		{"op": "call", "name": "search_tool_bm25", "arguments": map[string]any{"query": "echo message", "limit": 3}},
		{"op": "waitToolsChanged", "timeoutMs": 20000},
		{"op": "tools"},
		{"op": "call", "name": "mcp__everything__echo", "arguments": map[string]any{"message": "hello e2e"}},
		{"op": "call", "name": "search_tool_bm25", "arguments": map[string]any{"query": "delete entities relations observations", "limit": 8}},
		{"op": "call", "name": "mcp__memory__delete_entities", "arguments": map[string]any{"entityNames": []string{"x"}}},
		{"op": "call", "name": "search_tool_bm25", "arguments": map[string]any{"query": "   "}},
	}
	// Servers connect in the background: a fresh session retries until the hidden echo is found.
	var res *clientResult
	deadline := time.Now().Add(90 * time.Second)
	for {
		res = runClient(t, dir, baseEnv(home), steps, "--stdio", binary, "mcp", "serve", "--mode", "discovery")
		if strings.Contains(text(res.Results[1].Result), "mcp__everything__echo") || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if res.ServerInfo.Name != "nodmix" {
		t.Errorf("server name = %q", res.ServerInfo.Name)
	}
	before := names(res.Results[0].Tools)
	if !before["search_tool_bm25"] || !before["bash"] || before["mcp__everything__echo"] {
		t.Errorf("initial tools: %v (want search_tool_bm25 and bash, not the hidden echo)", before)
	}
	if got := text(res.Results[1].Result); !strings.Contains(got, `"mcp__everything__echo"`) || !strings.Contains(got, `"activated_tools"`) {
		t.Errorf("search result: %s", got)
	}
	if res.Results[2].Count < 1 {
		t.Errorf("no tools/list_changed after activation: %+v", res.Results[2])
	}
	if after := names(res.Results[3].Tools); !after["mcp__everything__echo"] {
		t.Errorf("echo not listed after activation: %v", after)
	}
	if got := text(res.Results[4].Result); !strings.Contains(got, "hello e2e") {
		t.Errorf("echo result: %q", got)
	}
	if got := text(res.Results[5].Result); strings.Contains(got, "mcp__memory__delete_") {
		t.Errorf("search found a denied tool: %s", got)
	}
	if r := res.Results[6]; r.OK || !strings.Contains(string(r.Error), "unknown tool") {
		t.Errorf("a denied tool was called: %+v", r)
	}
	if got := text(res.Results[7].Result); got != "ERROR: Query is required and must not be empty." {
		t.Errorf("blank query: %q", got)
	}
	// The session log says which tools ran and where they came from. Attempts made while the
	// servers were still connecting left logs of their own: the last session is among them all.
	logs, _ := filepath.Glob(filepath.Join(home, "logs", "sessions", "*.jsonl"))
	if len(logs) == 0 {
		t.Fatal("no session log")
	}
	var b []byte
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		b = append(b, data...)
	}
	if !strings.Contains(string(b), `"tool":"mcp:everything:echo","name":"mcp__everything__echo","source":"mcp","outcome":"ok"`) {
		t.Errorf("session log lacks the echo call:\n%s", b)
	}
}

// freePort returns a loopback address nobody listens on.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startGateway runs `nodmix gateway` and waits for /healthz.
func startGateway(t *testing.T, env []string, args ...string) string {
	t.Helper()
	addr := freePort(t)
	cmd := exec.Command(binary, append([]string{"gateway", "--listen", addr}, args...)...)
	cmd.Env = env
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("gateway did not stop on SIGINT:\n%s", errb.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return "http://" + addr + "/mcp"
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not become healthy: %v\n%s", err, errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startHTTPEverything runs server-everything in streamable HTTP mode and returns its URL.
func startHTTPEverything(t *testing.T, dir string) string {
	t.Helper()
	addr := freePort(t)
	_, port, _ := net.SplitHostPort(addr)
	argv := e2etest.Server(dir, "server-everything", "streamableHttp")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PORT="+port)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything (HTTP) did not listen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestE2EGatewayDirect(t *testing.T) {
	dir := e2etest.Dir(t)
	evURL := startHTTPEverything(t, dir)
	// A fifth server, reached over streamable HTTP, and a deny rule.
	home := e2eHome(t, dir, `tools: { deny: ["mcp:memory:delete_*"] },`)
	cfg, _ := os.ReadFile(filepath.Join(home, "nodmix.json5"))
	cfg = bytes.Replace(cfg, []byte("    servers: {\n"), []byte(fmt.Sprintf("    servers: {\n      evhttp: {url: %q},\n", evURL)), 1)
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	url := startGateway(t, baseEnv(home), "--mode", "direct")
	// Servers connect in the background: poll until all five have tools.
	var tools map[string]bool
	deadline := time.Now().Add(60 * time.Second)
	for {
		res := runClient(t, dir, baseEnv(home), []map[string]any{{"op": "tools"}}, "--url", url)
		tools = names(res.Results[0].Tools)
		if tools["mcp__everything__echo"] && tools["mcp__evhttp__echo"] && tools["mcp__memory__create_entities"] &&
			tools["mcp__filesystem__read_text_file"] && tools["mcp__fake__fake_plugin_tool_17"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every server's tools arrived: %v", tools)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if tools["mcp__memory__delete_entities"] {
		t.Error("a denied tool is listed")
	}
	res := runClient(t, dir, baseEnv(home), []map[string]any{
		{"op": "call", "name": "mcp__evhttp__echo", "arguments": map[string]any{"message": "over http"}},
		{"op": "call", "name": "mcp__fake__fake_plugin_tool_17", "arguments": map[string]any{"marker": "m17"}},
		{"op": "call", "name": "mcp__memory__delete_entities", "arguments": map[string]any{"entityNames": []string{"x"}}},
		{"op": "call", "name": "no_such_tool", "arguments": map[string]any{}},
	}, "--url", url)
	if got := text(res.Results[0].Result); !strings.Contains(got, "over http") {
		t.Errorf("echo over http: %q", got)
	}
	if got := text(res.Results[1].Result); !strings.Contains(got, "FAKE_PLUGIN_OK fake_plugin_tool_17 m17") {
		t.Errorf("fake tool: %q", got)
	}
	for _, i := range []int{2, 3} {
		if r := res.Results[i]; r.OK && !strings.HasPrefix(text(r.Result), "ERROR") {
			t.Errorf("step %d should fail: %+v", i, r)
		}
	}
}

// TestE2EToolSearchRegression is the documented regression against the MCP face: the same target
// tool is found and called in direct, tools and code modes, and the Tool Search surfaces are
// smaller than direct exposure.
func TestE2EToolSearchRegression(t *testing.T) {
	dir := e2etest.Dir(t)
	home := e2eHome(t, dir, "")
	env := baseEnv(home)
	const target = "mcp__fake__fake_plugin_tool_17"
	type lane struct {
		mode  string
		steps []map[string]any
	}
	lanes := []lane{
		{"direct", []map[string]any{{"op": "call", "name": target, "arguments": map[string]any{"marker": "direct"}},
			{"op": "tools"}}},
		{"toolsearch-tools", []map[string]any{{"op": "tools"},
			{"op": "call", "name": "tool_search", "arguments": map[string]any{"query": "fake plugin tool 17 reconcile"}},
			{"op": "call", "name": "tool_call", "arguments": map[string]any{"id": "mcp:fake:fake_plugin_tool_17", "args": map[string]any{"marker": "tools"}}}}},
		{"toolsearch-code", []map[string]any{{"op": "tools"},
			{"op": "call", "name": "tool_search_code", "arguments": map[string]any{"code": `
const hits = await nodmix.tools.search("fake_plugin_tool_17");
const hit = hits.find(h => h.name === "` + target + `");
const out = await nodmix.tools.call(hit.id, {marker: "code"});
return out.result;`}}}},
	}
	bytesByMode := map[string]int{}
	for _, l := range lanes {
		t.Run(l.mode, func(t *testing.T) {
			// stdio servers connect in the background; the fake catalog must be there first.
			var res *clientResult
			deadline := time.Now().Add(60 * time.Second)
			for {
				wait := []map[string]any{{"op": "sleep", "ms": 1500}}
				res = runClient(t, dir, env, append(wait, l.steps...), "--stdio", binary, "mcp", "serve", "--mode", l.mode)
				if strings.Contains(string(mustJSON(res)), "FAKE_PLUGIN_OK") || time.Now().After(deadline) {
					break
				}
			}
			tools := res.Results[1].Tools
			last := text(res.Results[len(res.Results)-1].Result)
			if l.mode == "direct" {
				tools = res.Results[2].Tools
				last = text(res.Results[1].Result)
			}
			raw, _ := json.Marshal(tools)
			bytesByMode[l.mode] = len(raw)
			if !strings.Contains(last, "FAKE_PLUGIN_OK fake_plugin_tool_17") {
				t.Errorf("%s: target not called: %s", l.mode, last)
			}
			switch l.mode {
			case "direct":
				if !names(tools)[target] {
					t.Errorf("direct mode does not expose %s", target)
				}
			case "toolsearch-tools":
				if n := names(tools); len(n) != 3 || !n["tool_search"] || !n["tool_describe"] || !n["tool_call"] {
					t.Errorf("tools mode exposes %v", n)
				}
				if got := text(res.Results[2].Result); !strings.Contains(got, "mcp:fake:fake_plugin_tool_17") {
					t.Errorf("tool_search did not find the target: %s", got)
				}
			case "toolsearch-code":
				if n := names(tools); len(n) != 1 || !n["tool_search_code"] {
					t.Errorf("code mode exposes %v", n)
				}
			}
		})
	}
	t.Logf("surface bytes: %v", bytesByMode)
	if !(bytesByMode["toolsearch-code"] < bytesByMode["direct"] && bytesByMode["toolsearch-tools"] < bytesByMode["direct"]) {
		t.Errorf("Tool Search surfaces are not smaller than direct: %v", bytesByMode)
	}
	logs, _ := filepath.Glob(filepath.Join(home, "logs", "sessions", "*.jsonl"))
	var all []byte
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		all = append(all, b...)
	}
	if !bytes.Contains(all, []byte(`"surface":"tool_search_code","call_id"`)) && !bytes.Contains(all, []byte(`"tool":"mcp:fake:fake_plugin_tool_17"`)) {
		t.Errorf("session logs do not show the bridged call:\n%s", all)
	}
	if !bytes.Contains(all, []byte(`"type":"tool_search"`)) {
		t.Errorf("session logs lack Tool Search telemetry")
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
