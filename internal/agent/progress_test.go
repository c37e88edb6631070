package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/llm"
)

func call(name, args string) llm.Part {
	return llm.Part{Kind: llm.KindToolCall, Name: name, Args: json.RawMessage(args)}
}

func TestToolSummary(t *testing.T) {
	cases := []struct {
		call         llm.Part
		detail, want string
	}{
		{call("exec", `{"command":["node","--check","/srv/app.js"]}`), "explain", "🛠️ Exec: node --check /srv/app.js"},
		{call("exec", `{"command":["node","--check","/srv/app.js"]}`), "raw", `🛠️ Exec: node --check /srv/app.js, {"command":["node","--check","/srv/app.js"]}`},
		{call("bash", `{"command":"go test ./...\necho done"}`), "explain", "🛠️ Bash: go test ./... …"},
		{call("mcp__github__create_issue", `{"title":"x"}`), "explain", "🛠️ github: create_issue"},
		{call("tool_search", `{"query":"open an issue"}`), "explain", "🛠️ Tool search: open an issue"},
		{call("web_search", `{"query":"`+strings.Repeat("q", 100)+`"}`), "explain", "🛠️ Web search: " + strings.Repeat("q", 80) + "…"},
	}
	for _, c := range cases {
		if got := agent.ToolSummary(c.call, c.detail); got != c.want {
			t.Errorf("ToolSummary(%s, %s) = %q, want %q", c.call.Args, c.detail, got, c.want)
		}
	}
	fail := agent.ToolRun{Call: call("exec", `{}`), Result: catalog.ErrorResult("exit 2\nmore")}
	if got := agent.ToolFailure(fail, false); got != "⚠️ Exec failed" {
		t.Errorf("failure = %q", got)
	}
	if got := agent.ToolFailure(fail, true); got != "⚠️ Exec failed: exit 2 …" {
		t.Errorf("full failure = %q", got)
	}
	long := agent.ToolRun{Call: call("exec", `{}`), Result: catalog.TextResult(strings.Repeat("x", agent.OutputMax+10))}
	if got := agent.ToolOutput(long); !strings.HasPrefix(got, "📄 Exec output:\n") || !strings.HasSuffix(got, "[10 characters not shown]") {
		t.Errorf("output = %q…", got[:40])
	}
}

func TestTraceLines(t *testing.T) {
	compacted := &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "short"}},
		Structured: json.RawMessage(`{"output":"short","tokenjuice":{"compacted":true,"rule":"git/status","raw_chars":1000,"compact_chars":100,"handle":"tj_1"}}`)}
	runs := []agent.ToolRun{
		{Call: call("tool_search", `{"query":"issue"}`), Result: catalog.TextResult(`[{"id":"a"},{"id":"b"}]`)},
		{Call: call("tool_describe", `{"id":"mcp:gh:create"}`), Result: catalog.TextResult(`{}`)},
		{Call: call("tool_call", `{"id":"mcp:gh:create","args":{}}`), Result: catalog.TextResult(`ok`)},
		{Call: call("tool_search_code", `{"code":"x"}`), Result: catalog.TextResult(`{"ok":true,"telemetry":{"searchCount":1,"describeCount":0,"callCount":2}}`)},
		{Call: call("bash", `{"command":"git status"}`), Result: compacted},
		{Call: call("exec", `{}`), Result: catalog.TextResult("plain")},
		{Call: call("tool_call", `{"id":"bash"}`), Result: &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "{}"}},
			Structured: json.RawMessage(`{"tool":{"id":"bash","name":"bash","source":"nodmix"},"result":{"content":[],"details":{"output":"short","tokenjuice":{"compacted":true,"rule":"git/log","raw_chars":400,"compact_chars":300,"handle":"tj_2"}}}}`)}},
	}
	want := []string{
		`🔎 Tool Search: search "issue" → 2 hit(s)`,
		"🔎 Tool Search: describe mcp:gh:create",
		"🔎 Tool Search: call mcp:gh:create (ok)",
		"🔎 Tool Search: code — 1 search(es), 0 describe(s), 2 call(s)",
		"🧃 tokenjuice: bash output 1000 → 100 characters (90% saved, rule git/status, full output: tj_1)",
		"🔎 Tool Search: call bash (ok)",
		"🧃 tokenjuice: bash output 400 → 300 characters (25% saved, rule git/log, full output: tj_2)",
	}
	if diff := cmp.Diff(want, agent.TraceLines(runs)); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}
