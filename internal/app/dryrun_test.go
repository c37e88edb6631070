package app

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// TestDryRunIsTheRequestSent: `nodmix agent --dry-run` prints the request the turn's first model
// call sends, byte for byte, whatever the session holds: client calls never answered are
// closed in both, and a question retried after a failed turn is sent once in both.
func TestDryRunIsTheRequestSent(t *testing.T) {
	call := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, CallID: "c9", Name: "client_lookup", Args: json.RawMessage(`{}`)}}}
	for _, tc := range []struct {
		name    string
		history []llm.Message
		input   string
	}{
		{"a new session", nil, "hi"},
		{"an unanswered client call", append(userText("look it up"), call), "never mind"},
		{"a question retried after a failed turn", userText("hi again"), "hi again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mock := llmtest.NewOpenAI(func(*llmtest.Seen) llmtest.Reply { return llmtest.Reply{Text: "done"} })
			defer mock.Close()
			a := fastAutoApp(t, mock, `{}`)
			ctx := context.Background()
			if tc.history != nil {
				if _, err := a.Store.Append(ctx, "s", 0, tc.history); err != nil {
					t.Fatal(err)
				}
			}
			req := TurnRequest{Session: "s", Input: userText(tc.input)}
			dr, reply, err := a.Prepare(ctx, req)
			if err != nil || reply != "" {
				t.Fatalf("dry run: %v %q", err, reply)
			}
			if _, err := a.Turn(ctx, req); err != nil {
				t.Fatal(err)
			}
			sent := mock.Requests()
			if len(sent) == 0 {
				t.Fatal("the turn sent nothing")
			}
			var got, want any
			if err := json.Unmarshal(dr.Body, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(sent[0].Body, &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("dry run against the request sent (-sent +dry run):\n%s", diff)
			}
		})
	}
}
