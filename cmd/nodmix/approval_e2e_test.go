package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestApprovalByElicitation: over the MCP face, a call that needs approval is put to the client's
// user through elicitation; an approval runs that one call, a refusal blocks it.
func TestApprovalByElicitation(t *testing.T) {
	home := t.TempDir()
	cfg := `{tools: {approval: {require: ["nodmix:core:bash"]}}}`
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var asked []string
	answer := "accept"
	client := mcp.NewClient(&mcp.Implementation{Name: "approver", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			if answer == "accept" {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			}
			return &mcp.ElicitResult{Action: answer}, nil
		},
	})
	cmd := exec.Command(binary, "mcp", "serve", "--mode", "direct")
	cmd.Env = baseEnv(home)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func() (string, bool) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo approved-run"}})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	}
	if text, isErr := call(); isErr || !strings.Contains(text, "approved-run") {
		t.Errorf("approved call: %q (error %v)", text, isErr)
	}
	answer = "decline"
	if text, isErr := call(); !isErr || !strings.Contains(text, "blocked before execution") || !strings.Contains(text, "declined") {
		t.Errorf("declined call: %q (error %v)", text, isErr)
	}
	if len(asked) != 2 || !strings.Contains(asked[0], "nodmix:core:bash") || !strings.Contains(asked[0], "echo approved-run") {
		t.Errorf("elicitations: %q", asked)
	}
}
