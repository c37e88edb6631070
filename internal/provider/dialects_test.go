package provider_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/provider"
)

// TestBuiltinReasoningContentFill checks the reasoning_content the built-in Chat Completions
// providers send back on a tool-call turn that had no reasoning, then on its answer, with
// thinking on (absent: "-"). DeepSeek (https://api-docs.deepseek.com/guides/thinking_mode)
// wants every assistant message of a turn with a tool call to carry it, "" when there is none;
// Moonshot (https://platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model) wants it on
// tool-call messages and reads "" as missing. Either answers 400 without it. See
// openaichat.TestReasoningContentFill for the rules in detail.
func TestBuiltinReasoningContentFill(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "time?"}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, CallID: "c1", Name: "clock", Args: json.RawMessage(`{}`)}}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "c1", Text: "12:00"}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindText, Text: "Noon."}}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "thanks"}}},
	}
	on := llm.Patch{Body: json.RawMessage(`{"thinking":{"type":"enabled"}}`)}
	for _, tc := range []struct {
		provider string
		want     []string
	}{
		{"deepseek", []string{`""`, `""`}},
		{"moonshot", []string{`" "`, "-"}},
		{"zai", []string{"-", "-"}}, // no documented rule: unchanged
		{"openrouter", []string{"-", "-"}},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			d, err := provider.Dialect("openai-completions", tc.provider)
			if err != nil {
				t.Fatal(err)
			}
			req := llm.Request{Model: "m", Messages: msgs, Tools: []llm.Tool{{Name: "clock", Parameters: json.RawMessage(`{"type":"object"}`)}}}
			enc, err := d.Encode(&req, on)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Messages []struct {
					Role             string          `json:"role"`
					ReasoningContent json.RawMessage `json:"reasoning_content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(enc.Body, &body); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range body.Messages {
				if m.Role == "assistant" {
					if m.ReasoningContent == nil {
						got = append(got, "-")
					} else {
						got = append(got, string(m.ReasoningContent))
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reasoning_content per assistant message (-want +got):\n%s", diff)
			}
		})
	}
}
