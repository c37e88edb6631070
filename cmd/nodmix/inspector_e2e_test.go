package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/e2etest"
)

// The MCP Inspector CLI lists once and calls right after initialize, as many agents do: it must
// see a downstream server's tools through `nodmix mcp serve` on its first connection (no cached
// manifest yet), and again from the cached manifest while the server is slow to start.

// inspectorHome writes a config with server-everything behind testdata/e2e/slow-start.sh, which
// sleeps SLOW_START seconds before it runs the server, and the Inspector's own config that starts
// `nodmix mcp serve` in direct mode on that home.
func inspectorHome(t *testing.T, dir, slow string) (clientConfig string) {
	t.Helper()
	home := t.TempDir()
	writeInspectorConfig(t, dir, home, slow)
	client := map[string]any{"mcpServers": map[string]any{"nodmix": map[string]any{
		"command": binary,
		"args":    []string{"mcp", "serve", "--mode", "direct"},
		"env":     map[string]string{"NODMIX_HOME": home, "HOME": home},
	}}}
	clientConfig = filepath.Join(home, "inspector.json")
	if err := os.WriteFile(clientConfig, mustJSON(client), 0o600); err != nil {
		t.Fatal(err)
	}
	return clientConfig
}

func writeInspectorConfig(t *testing.T, dir, home, slow string) {
	t.Helper()
	argv := append([]string{filepath.Join(dir, "slow-start.sh")}, e2etest.Server(dir, "server-everything", "stdio")...)
	args, _ := json.Marshal(argv)
	cfg := fmt.Sprintf(`{mcp: {servers: {everything: {command: "sh", args: %s, env: {SLOW_START: %q}}}}}`, args, slow)
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// inspector runs `mcp-inspector --cli --config FILE --server nodmix ARGS...` and returns its
// JSON output.
func inspector(t *testing.T, dir, clientConfig string, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	bin := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	argv := append([]string{bin, "--cli", "--config", clientConfig, "--server", "nodmix"}, args...)
	cmd := exec.CommandContext(ctx, "node", argv...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCP_INSPECTOR_SECRET_STORE=memory")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspector %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out.String(), errb.String())
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("inspector %v output: %v\n%s", args, err, out.String())
	}
	return res
}

// listedTool finds a tool in a tools/list result and returns its _meta (nil when it has none).
func listedTool(t *testing.T, res map[string]any, name string) (meta map[string]any) {
	t.Helper()
	tools, _ := res["tools"].([]any)
	var names []string
	for _, x := range tools {
		tool, _ := x.(map[string]any)
		if tool["name"] == name {
			meta, _ := tool["_meta"].(map[string]any)
			return meta
		}
		n, _ := tool["name"].(string)
		names = append(names, n)
	}
	t.Fatalf("%s not listed; tools: %s", name, strings.Join(names, " "))
	return nil
}

func callText(t *testing.T, res map[string]any) string {
	t.Helper()
	return text(mustJSON(res))
}

func TestE2EInspectorFirstConnectionAndCachedManifest(t *testing.T) {
	dir := e2etest.Dir(t)
	const echo = "mcp__everything__echo"

	// First connection, nothing cached: the first tools/list waits for the server.
	first := inspectorHome(t, dir, "0")
	if meta := listedTool(t, inspector(t, dir, first, "--method", "tools/list"), echo); meta != nil {
		t.Errorf("a tool of a connected server carries _meta %v", meta)
	}
	// Another fresh home: a call on the first connection (the Inspector lists, then calls).
	fresh := inspectorHome(t, dir, "0")
	if got := callText(t, inspector(t, dir, fresh, "--method", "tools/call", "--tool-name", echo, "--tool-arg", "message=first")); got != "Echo: first" {
		t.Errorf("call on the first connection = %q", got)
	}

	// The server now takes 2 s to start; its env is not part of what the manifest depends on.
	writeInspectorConfig(t, dir, filepath.Dir(first), "2")
	meta := listedTool(t, inspector(t, dir, first, "--method", "tools/list"), echo)
	if meta["nodmix/connected"] != false {
		t.Errorf("a tool listed from the cache while its server starts has _meta %v, want nodmix/connected: false", meta)
	}
	if got := callText(t, inspector(t, dir, first, "--method", "tools/call", "--tool-name", echo, "--tool-arg", "message=cached")); got != "Echo: cached" {
		t.Errorf("call of a cached tool while its server starts = %q", got)
	}
}
