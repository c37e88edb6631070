package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/nodmix/nodmix/internal/e2etest"
)

// fakeTavily speaks Tavily's documented /search wire format and records what it was sent.
type fakeTavily struct {
	mu       sync.Mutex
	requests []map[string]any
	auth     []string
	paths    []string
}

func (f *fakeTavily) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.paths = append(f.paths, r.URL.Path)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"query": %q, "answer": null, "images": [], "results": [
	  {"title": "nodmix gateway", "url": "https://example.com/nodmix", "content": "A self-hosted agent gateway.", "score": 0.91, "published_date": "Mon, 30 Nov 2026 08:00:00 GMT"}
	], "response_time": 0.42}`, req["query"])
}

func run(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestTavilyThroughCLIAndMCP(t *testing.T) {
	fake := &fakeTavily{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	home := t.TempDir()
	env := append(baseEnv(home), "TAVILY_TEST_KEY=tvly-e2e-secret")
	cfg := fmt.Sprintf(`{
  plugins: { entries: { tavily: { enabled: true, config: { webSearch: { apiKey: {"$env": "TAVILY_TEST_KEY"}, baseUrl: %q } } } } },
  tools: { web: { search: { provider: "tavily" } } },
}`, srv.URL+"/proxy")
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := run(t, env, "", "tools", "call", "nodmix:tavily:tavily_search", "--args", `{"query":"nodmix gateway","max_results":3,"search_depth":"advanced"}`, "--json")
	if code != 0 {
		t.Fatalf("tools call: exit %d\n%s\n%s", code, out, errOut)
	}
	var res struct {
		Content           []struct{ Text string } `json:"content"`
		StructuredContent json.RawMessage         `json:"structuredContent"`
		IsError           bool                    `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.IsError || !strings.Contains(out, "https://example.com/nodmix") || !strings.Contains(out, "2026-11-30T08:00:00Z") {
		t.Errorf("result lacks the structured hit with an ISO 8601 date:\n%s", out)
	}
	if strings.Contains(out+errOut, "tvly-e2e-secret") {
		t.Error("the API key appears in the output")
	}
	fake.mu.Lock()
	if len(fake.requests) != 1 || fake.paths[0] != "/proxy/search" || fake.auth[0] != "Bearer tvly-e2e-secret" ||
		fake.requests[0]["query"] != "nodmix gateway" || fake.requests[0]["search_depth"] != "advanced" || fake.requests[0]["api_key"] != nil {
		t.Errorf("request: paths %v auth %v body %v", fake.paths, fake.auth, fake.requests)
	}
	fake.mu.Unlock()

	// Bad input is refused before any request.
	out, errOut, code = run(t, env, "", "tools", "call", "nodmix:tavily:tavily_search", "--args", `{"query":"x","max_results":21}`)
	if code != 1 || !strings.Contains(out+errOut, "max_results") {
		t.Errorf("max_results 21: exit %d\n%s%s", code, out, errOut)
	}
	fake.mu.Lock()
	if len(fake.requests) != 1 {
		t.Errorf("a refused call reached the API: %d requests", len(fake.requests))
	}
	fake.mu.Unlock()

	// The same tool through the MCP face, and web_search with Tavily as its provider.
	dir := e2etest.Dir(t)
	r := runClient(t, dir, env, []map[string]any{
		{"op": "call", "name": "tavily_search", "arguments": map[string]any{"query": "over mcp"}},
		{"op": "call", "name": "web_search", "arguments": map[string]any{"query": "generic search", "count": 2}},
	}, "--stdio", binary, "mcp", "serve", "--mode", "direct")
	if got := text(r.Results[0].Result); !strings.Contains(got, "https://example.com/nodmix") {
		t.Errorf("tavily_search over MCP: %s", got)
	}
	if got := text(r.Results[1].Result); !strings.Contains(got, "nodmix gateway") || strings.HasPrefix(got, "ERROR") {
		t.Errorf("web_search over MCP: %s", got)
	}
}

func TestTokenjuiceRawAcrossProcesses(t *testing.T) {
	home := t.TempDir()
	env := baseEnv(home)
	if _, errOut, code := run(t, env, "", "plugins", "enable", "tokenjuice"); code != 0 {
		t.Fatal(errOut)
	}
	// A noisy command: 3,000 numbered lines.
	out, errOut, code := run(t, env, "", "tools", "call", "nodmix:core:bash", "--args", `{"command":"seq 1 3000 | sed 's/^/line /'"}`)
	if code != 0 {
		t.Fatalf("bash: exit %d\n%s\n%s", code, out, errOut)
	}
	if len(out) > 20000 || !strings.Contains(out, "[tokenjuice: compacted") {
		t.Fatalf("output not compacted (%d bytes):\n%.2000s", len(out), out)
	}
	if !strings.Contains(out, "exit code 0") {
		t.Errorf("the exit status line is gone:\n%s", out)
	}
	handle := regexp.MustCompile(`tj_[0-9a-f]+`).FindString(out)
	if handle == "" {
		t.Fatalf("no handle in:\n%s", out)
	}
	raw, errOut, code := run(t, env, "", "tokenjuice", "raw", handle)
	if code != 0 {
		t.Fatalf("tokenjuice raw: %s", errOut)
	}
	var want strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if raw != want.String() {
		t.Errorf("raw output differs: got %d bytes, want %d", len(raw), want.Len())
	}
	if _, errOut, code := run(t, env, "", "tokenjuice", "raw", "tj_000000000000"); code == 0 || !strings.Contains(errOut, "tj_000000000000") {
		t.Errorf("unknown handle: exit %d, %s", code, errOut)
	}

	// The compact command is the same code path; --stats tells the rule and the savings.
	out, errOut, code = run(t, env, want.String(), "tokenjuice", "compact", "--command", "seq 1 3000", "--stats")
	if code != 0 || !strings.Contains(out, "[tokenjuice: compacted") || !strings.Contains(errOut, "saved") {
		t.Errorf("compact: exit %d\n%.500s\n%s", code, out, errOut)
	}
	// An exact file read stays byte-identical.
	out, _, _ = run(t, env, want.String(), "tokenjuice", "compact", "--command", "cat numbers.txt")
	if out != want.String() {
		t.Error("cat output was changed")
	}
}

func TestGatewayDiscovery(t *testing.T) {
	dir := e2etest.Dir(t)
	home := e2eHome(t, dir, "")
	url := startGateway(t, baseEnv(home), "--mode", "discovery")
	r := runClient(t, dir, baseEnv(home), []map[string]any{
		{"op": "tools"},
		{"op": "call", "name": "search_tool_bm25", "arguments": map[string]any{"query": "create entities knowledge graph", "limit": 2}},
		{"op": "waitToolsChanged", "timeoutMs": 20000},
		{"op": "tools"},
		{"op": "call", "name": "mcp__memory__create_entities", "arguments": map[string]any{"entities": []map[string]any{{"name": "nodmix", "entityType": "project", "observations": []string{"an agent gateway"}}}}},
	}, "--url", url)
	if names(r.Results[0].Tools)["mcp__memory__create_entities"] {
		t.Error("hidden tool listed before activation")
	}
	if r.Results[2].Count < 1 || !names(r.Results[3].Tools)["mcp__memory__create_entities"] {
		t.Errorf("activation over /mcp: count %d, tools %v, search %s", r.Results[2].Count, names(r.Results[3].Tools), text(r.Results[1].Result))
	}
	if got := text(r.Results[4].Result); !strings.Contains(got, "nodmix") || strings.HasPrefix(got, "ERROR") {
		t.Errorf("create_entities: %s (error %s)", got, r.Results[4].Error)
	}
}
