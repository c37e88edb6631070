package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// TestAgentToolRulesNarrow: agents.list[].tools.allow / deny narrow, for that agent's turns,
// what tools.allow / deny permit: the model is not offered what they leave out, and a call to it
// is not run. Other agents and the defaults keep the whole allowed catalog.
func TestAgentToolRulesNarrow(t *testing.T) {
	var lastResult string
	mock := llmtest.NewOpenAI(func(s *llmtest.Seen) llmtest.Reply {
		if s.Last.Role == "tool" {
			lastResult = s.Last.Text
			return llmtest.Reply{Text: "done"}
		}
		return llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "exec", Args: `{"command": ["echo", "ran-exec"]}`}}}
	})
	defer mock.Close()
	cfg := fmt.Sprintf(`{
  models: {providers: {openai: {baseUrl: %q}}},
  agents: {
    defaults: {model: "openai/gpt-5.2"},
    list: [
      {id: "noexec", tools: {deny: ["exec"]}},
      {id: "bashonly", tools: {allow: ["bash"]}},
      {id: "plain"},
    ],
  },
  tools: {deny: ["web_search"]},
}`, mock.URL+"/v1")
	a := persistentApp(t, cfg)

	for _, tc := range []struct {
		agent   string
		offered []string
		ran     bool
	}{
		{"", []string{"bash", "exec"}, true},
		{"plain", []string{"bash", "exec"}, true},
		{"noexec", []string{"bash"}, false},
		{"bashonly", []string{"bash"}, false},
		{"noexec", []string{"bash"}, false}, // the agent's engine, built once, is used again
	} {
		lastResult = ""
		before := len(mock.Requests())
		res, err := a.Turn(context.Background(), TurnRequest{Session: "s-" + tc.agent, Agent: tc.agent, Ephemeral: true, Input: userText("run it")})
		if err != nil {
			t.Fatalf("agent %q: %v", tc.agent, err)
		}
		sent := mock.Requests()[before:]
		if len(sent) == 0 {
			t.Fatalf("agent %q: nothing sent", tc.agent)
		}
		if diff := cmp.Diff(tc.offered, sent[0].Tools); diff != "" {
			t.Errorf("agent %q: tools offered (-want +got):\n%s", tc.agent, diff)
		}
		if got := strings.Contains(lastResult, "ran-exec"); got != tc.ran {
			t.Errorf("agent %q: exec ran = %v, want %v (result %q, answer %q)", tc.agent, got, tc.ran, lastResult, res.Text)
		}
	}
}

// TestAgentToolRulesNarrowToolSearch: under Tool Search the agent's model reaches tools through
// tool_call; what its rules leave out is not reached that way either.
func TestAgentToolRulesNarrowToolSearch(t *testing.T) {
	var lastResult string
	mock := llmtest.NewOpenAI(func(s *llmtest.Seen) llmtest.Reply {
		if s.Last.Role == "tool" {
			lastResult = s.Last.Text
			return llmtest.Reply{Text: "done"}
		}
		return llmtest.Reply{Calls: []llmtest.Call{{ID: "c1", Name: "tool_call", Args: `{"id": "exec", "args": {"command": ["echo", "ran-exec"]}}`}}}
	})
	defer mock.Close()
	cfg := fmt.Sprintf(`{
  models: {providers: {openai: {baseUrl: %q}}},
  agents: {defaults: {model: "openai/gpt-5.2"}, list: [{id: "noexec", tools: {deny: ["exec"]}}]},
  tools: {toolSearch: {mode: "tools"}},
}`, mock.URL+"/v1")
	a := persistentApp(t, cfg)
	for _, tc := range []struct {
		agent string
		ran   bool
	}{{"", true}, {"noexec", false}} {
		lastResult = ""
		if _, err := a.Turn(context.Background(), TurnRequest{Session: "ts-" + tc.agent, Agent: tc.agent, Ephemeral: true, Input: userText("run it")}); err != nil {
			t.Fatalf("agent %q: %v", tc.agent, err)
		}
		if lastResult == "" {
			t.Fatalf("agent %q: no tool result reached the model", tc.agent)
		}
		if got := strings.Contains(lastResult, "ran-exec"); got != tc.ran {
			t.Errorf("agent %q: exec ran = %v, want %v (result %q)", tc.agent, got, tc.ran, lastResult)
		}
	}
}

// TestStepLimitNamesItsSetting: the error at the step limit names the setting to raise, the
// agent's own when it set the limit.
func TestStepLimitNamesItsSetting(t *testing.T) {
	a := persistentApp(t, `{agents: {defaults: {model: "scripted/demo", maxSteps: 1}, list: [{id: "x"}, {id: "short", maxSteps: 1}]}}`)
	for agentID, want := range map[string]string{"": "(agents.defaults.maxSteps)", "x": "(agents.defaults.maxSteps)", "short": "(agents.list[1].maxSteps)"} {
		_, err := a.Turn(context.Background(), TurnRequest{Session: "s", Agent: agentID, Ephemeral: true, Input: userText(`run exec {"command": ["true"]}`)})
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("agent %q: err = %v, want it to end %q", agentID, err, want)
		}
	}
}

// TestPlannedNamesTheModelRun: a turn that asks for no model tells its face the one it runs.
func TestPlannedNamesTheModelRun(t *testing.T) {
	a := persistentApp(t, `{agents: {defaults: {model: "scripted/demo"}}}`)
	var got []string
	req := TurnRequest{Session: "s", Ephemeral: true, Input: userText("hello"), Planned: func(m string) { got = append(got, m) }}
	if _, err := a.Turn(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"scripted/demo"}, got); diff != "" {
		t.Errorf("planned (-want +got):\n%s", diff)
	}
}
