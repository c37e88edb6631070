package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/e2etest"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// The seeds' Tool Search E2E, through the agent runtime: a mock OpenAI provider on loopback, a
// fake plugin catalog of 600 tools plus a real npm MCP server, and the gateway started in direct
// mode and with Tool Search (tools and code lanes). Each lane asks /v1/chat/completions for the
// same target tool; the mock plays a model that uses whatever surface it is offered.

const e2eTarget = "fake_plugin_tool_123"

// laneModel is the mock's script: call the target by the surface offered, then answer with what
// the tool returned.
func laneModel(s *llmtest.Seen) llmtest.Reply {
	if s.Last.Role == "tool" {
		switch {
		case strings.HasPrefix(s.Last.CallID, "search"):
			return llmtest.Reply{Calls: []llmtest.Call{{ID: "describe_1", Name: "tool_describe", Args: `{"id":"mcp:fake:` + e2eTarget + `"}`}}}
		case strings.HasPrefix(s.Last.CallID, "describe"):
			return llmtest.Reply{Calls: []llmtest.Call{{ID: "call_1", Name: "tool_call", Args: `{"id":"mcp:fake:` + e2eTarget + `","args":{"marker":"M-123"}}`}}}
		}
		return llmtest.Reply{Text: "Result: " + s.Last.Text}
	}
	switch {
	case s.HasTool("tool_search_code"):
		code := `const hits = await nodmix.tools.search("fake plugin tool 123 reconcile");
const hit = hits.find(h => h.name === "mcp__fake__` + e2eTarget + `");
return (await nodmix.tools.call(hit.id, {marker: "M-123"})).result;`
		args, _ := json.Marshal(map[string]string{"code": code})
		return llmtest.Reply{Calls: []llmtest.Call{{ID: "code_1", Name: "tool_search_code", Args: string(args)}}}
	case s.HasTool("tool_search"):
		return llmtest.Reply{Calls: []llmtest.Call{{ID: "search_1", Name: "tool_search", Args: `{"query":"fake plugin tool 123 reconcile"}`}}}
	case s.HasTool("mcp__fake__" + e2eTarget):
		return llmtest.Reply{Calls: []llmtest.Call{{ID: "direct_1", Name: "mcp__fake__" + e2eTarget, Args: `{"marker":"M-123"}`}}}
	}
	return llmtest.Reply{Text: "the target tool is not offered"}
}

// agentHome writes a config with the mock provider, the fake catalog and server-everything.
func agentHome(t *testing.T, dir, mockURL, api, toolsSection string) string {
	t.Helper()
	home := t.TempDir()
	server := func(argv []string) string {
		args, _ := json.Marshal(argv[1:])
		return fmt.Sprintf(`{command: %q, args: %s}`, argv[0], args)
	}
	cfg := fmt.Sprintf(`{
  models: {providers: {mock: {baseUrl: %q, api: %q, apiKey: "sk-e2e-secret-0123456789", models: [{id: "mock-1"}]}}},
  agents: {defaults: {model: "mock/mock-1"}},
  mcp: {servers: {everything: %s, fake: %s}},
  tools: %s,
}
`, mockURL+"/v1", api, server(e2etest.Server(dir, "server-everything", "stdio")),
		server([]string{"node", filepath.Join(dir, "fake-catalog.mjs"), "600"}), toolsSection)
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func chat(t *testing.T, base, session, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Nodmix-Session", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// logLines reads a session log.
func logLines(t *testing.T, home, session string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(home, "logs", "sessions", session+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestE2EAgentToolSearchLanes(t *testing.T) {
	dir := e2etest.Dir(t)
	mock := llmtest.NewOpenAI(laneModel)
	defer mock.Close()
	lanes := []struct {
		name, tools string
	}{
		{"direct", `{discoveryMode: "off"}`},
		{"toolsearch-tools", `{toolSearch: {mode: "tools"}}`},
		{"toolsearch-code", `{toolSearch: {mode: "code"}}`},
	}
	firstBytes := map[string]int{}
	for _, lane := range lanes {
		t.Run(lane.name, func(t *testing.T) {
			home := agentHome(t, dir, mock.URL, "openai-completions", lane.tools)
			base := strings.TrimSuffix(startGateway(t, baseEnv(home)), "/mcp")
			waitServersReady(t, base, "fake", "everything")
			before := len(mock.Requests())
			status, body := chat(t, base, "lane-"+lane.name, `{"model":"mock/mock-1","messages":[{"role":"user","content":"Reconcile with fake plugin tool 123, marker M-123."}]}`)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			var out struct {
				Choices []struct {
					Message struct{ Content string } `json:"message"`
				} `json:"choices"`
			}
			_ = json.Unmarshal(body, &out)
			if got := out.Choices[0].Message.Content; !strings.Contains(got, "FAKE_PLUGIN_OK") {
				t.Fatalf("the target tool was not called: %q", got)
			}
			reqs := mock.Requests()[before:]
			first := reqs[0]
			firstBytes[lane.name] = len(first.Body)
			// What the provider saw up front.
			switch lane.name {
			case "direct":
				if !first.HasTool("mcp__fake__"+e2eTarget) || len(first.Tools) < 600 {
					t.Errorf("direct mode must expose every schema: %d tools", len(first.Tools))
				}
			case "toolsearch-tools":
				if len(first.Tools) != 3 || !first.HasTool("tool_search") {
					t.Errorf("tools lane exposes %v", first.Tools)
				}
			case "toolsearch-code":
				if len(first.Tools) != 1 || !first.HasTool("tool_search_code") {
					t.Errorf("code lane exposes %v", first.Tools)
				}
			}
			if bytes.Contains(first.Body, []byte("sk-e2e-secret")) || first.Header.Get("Authorization") != "Bearer sk-e2e-secret-0123456789" {
				t.Errorf("the key must travel in the Authorization header only")
			}
			// No log under the home holds the key.
			_ = filepath.Walk(filepath.Join(home, "logs"), func(path string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("sk-e2e-secret")) {
						t.Errorf("%s holds the provider key", path)
					}
				}
				return nil
			})
			// The session log: one model line per provider call, the calls with their sources.
			lines := logLines(t, home, "lane-"+lane.name)
			counts := map[string]int{}
			for _, l := range lines {
				switch l["type"] {
				case "model":
					counts["model"]++
					if l["tools"] != float64(len(first.Tools)) && counts["model"] == 1 {
						t.Errorf("model line tools = %v, want %d", l["tools"], len(first.Tools))
					}
				case "call":
					counts[fmt.Sprintf("%v:%v", l["surface"], l["name"])]++
					if l["name"] == "mcp__fake__"+e2eTarget && l["source"] != "mcp" {
						t.Errorf("bridged call source = %v", l["source"])
					}
				}
			}
			wantCounts := map[string]map[string]int{
				"direct":           {"model": 2, "agent:mcp__fake__" + e2eTarget: 1},
				"toolsearch-tools": {"model": 4, "agent:tool_search": 1, "agent:tool_describe": 1, "agent:tool_call": 1, "tool_call:mcp__fake__" + e2eTarget: 1},
				"toolsearch-code":  {"model": 2, "agent:tool_search_code": 1, "tool_search_code:mcp__fake__" + e2eTarget: 1},
			}[lane.name]
			for k, v := range wantCounts {
				if counts[k] != v {
					t.Errorf("session log %s = %d, want %d (all: %v)", k, counts[k], v, counts)
				}
			}
		})
	}
	t.Logf("first request bytes per lane: %v", firstBytes)
	if !(firstBytes["toolsearch-tools"] < firstBytes["direct"] && firstBytes["toolsearch-code"] < firstBytes["direct"]) {
		t.Errorf("Tool Search requests must be smaller than direct: %v", firstBytes)
	}
}

// waitServersReady polls /healthz until the named servers are ready. A turn waits only for each
// server's first connection attempt, and under load a first attempt can fail and be retried; the
// lanes compare what the model is offered, so they start once the catalog is whole.
func waitServersReady(t *testing.T, base string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			var h struct {
				Servers map[string]struct {
					State     string `json:"state"`
					LastError string `json:"lastError"`
				} `json:"servers"`
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = string(b)
			if json.Unmarshal(b, &h) == nil {
				ready := true
				for _, n := range names {
					ready = ready && h.Servers[n].State == "ready"
				}
				if ready {
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("servers %v not ready: %s", names, last)
}
