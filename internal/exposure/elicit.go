package exposure

import (
	"context"
	"fmt"

	"github.com/nodmix/nodmix/internal/policy"
)

// SessionAskers registers who approves the calls of one session. Implementations are safe for
// concurrent use.
type SessionAskers interface {
	SetSessionAsker(session string, a policy.Asker) (remove func())
}

// ElicitFunc asks the session's user through the client (see mcpserve.ElicitFunc).
type ElicitFunc = func(ctx context.Context, message string, schema any) (action string, content map[string]any, err error)

// approvalSchema is the answer the user gives: one boolean.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Approve this call", "description": "Run this tool call once, with exactly these arguments."},
	},
	"required": []string{"approve"},
}

// UseElicitation makes the view's client the approver of its session's calls.
func (v *View) UseElicitation(ask ElicitFunc) (cancel func()) {
	if v.e.Askers == nil {
		return func() {}
	}
	return v.e.Askers.SetSessionAsker(v.session, elicitAsker{ask})
}

// elicitAsker asks for approvals through MCP elicitation.
type elicitAsker struct{ ask ElicitFunc }

func (e elicitAsker) Ask(ctx context.Context, req policy.ApprovalRequest) (policy.Decision, error) {
	msg := fmt.Sprintf("nodmix: approve a call to %s (%s)? tools.approval.require matches %q.\nArguments: %s",
		req.ToolName, req.ToolID, req.Pattern, req.Args)
	action, content, err := e.ask(ctx, msg, approvalSchema)
	if err != nil {
		return policy.Decision{}, fmt.Errorf("%w: elicitation failed: %v", policy.ErrCannotAsk, err)
	}
	if action == "accept" && content["approve"] == true {
		return policy.Decision{Approve: true}, nil
	}
	reason := "the user declined"
	if action == "cancel" {
		reason = "the user dismissed the approval request"
	}
	return policy.Decision{Approve: false, Reason: reason}, nil
}
