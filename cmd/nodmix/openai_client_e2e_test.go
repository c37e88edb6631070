package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/e2etest"
)

// The official openai npm client (v6, Node 20) against the gateway's OpenAI-compatible API, with
// the scripted model behind it: plain, streamed, Responses, and a client tool round trip.
func TestE2EOpenAINodeClient(t *testing.T) {
	dir := e2etest.Dir(t)
	home := t.TempDir()
	cfg := `{agents: {defaults: {model: "scripted/demo"}}}`
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(startGateway(t, baseEnv(home)), "/mcp") + "/v1"
	cmd := exec.Command("node", filepath.Join(dir, "openai-client.mjs"), base, "scripted/demo")
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("openai-client.mjs: %v\n%s", err, stderr)
	}
	var got struct {
		Plain struct {
			Content, Finish string
			Usage           struct {
				TotalTokens int `json:"total_tokens"`
			}
		}
		Stream struct {
			Text   string
			Chunks int
			Usage  *struct {
				TotalTokens int `json:"total_tokens"`
			}
		}
		Responses       struct{ Text, Status string }
		ResponsesStream struct{ Text, First, Last string }
		ToolCall        struct{ Finish, Name, Args string }
		ToolResult      struct{ Content string }
		Session         string
		Error           struct {
			Status int
			Code   string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"plain content", got.Plain.Content == "You said: hello from npm" && got.Plain.Finish == "stop" && got.Plain.Usage.TotalTokens > 0},
		{"stream text", got.Stream.Text == "You said: streamed hello" && got.Stream.Chunks > 3 && got.Stream.Usage != nil},
		{"responses", got.Responses.Text == "You said: responses hello" && got.Responses.Status == "completed"},
		{"responses stream", got.ResponsesStream.Text == "You said: responses stream" && got.ResponsesStream.First == "response.created" && got.ResponsesStream.Last == "response.completed"},
		{"client tool call", got.ToolCall.Finish == "tool_calls" && got.ToolCall.Name == "get_weather" && got.ToolCall.Args == `{"city":"Oslo"}`},
		{"client tool result", got.ToolResult.Content == "get_weather returned: sunny, 21 C"},
		{"error object", got.Error.Status == 400 && got.Error.Code == "invalid_model"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %s", c.what, out)
		}
	}
	// The client resent the whole conversation; the session keeps each message once.
	show := exec.Command(binary, "sessions", "show", got.Session, "--json")
	show.Env = baseEnv(home)
	b, err := show.Output()
	if err != nil {
		t.Fatalf("sessions show: %v", err)
	}
	var sess struct {
		Messages []struct{ Role string } `json:"messages"`
	}
	_ = json.Unmarshal(b, &sess)
	var roles []string
	for _, m := range sess.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,tool,assistant" {
		t.Errorf("session transcript roles = %v", roles)
	}
}
