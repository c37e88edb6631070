package provider_test

import (
	"encoding/json"
	"flag"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
	"github.com/nodmix/nodmix/internal/provider"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestZAIPreservedThinking holds the request Z.AI gets for a thinking tool loop to a golden
// file. https://docs.z.ai/guides/capabilities/thinking-mode documents two rules for GLM:
//
//   - Interleaved thinking (on by default since GLM-4.5): "thinking blocks should be explicitly
//     preserved and returned together with the tool results", so the tool-call message carries
//     its reasoning_content.
//   - Preserved thinking: with "clear_thinking": false inside `thinking` (the Coding Plan
//     endpoint's default) "you must return the complete, unmodified reasoning_content back to
//     the API", every consecutive block as generated, so the answer after the tool result
//     carries its own too. With clear_thinking true the server clears it, so it is sent either
//     way.
//
// Z.AI documents no refusal of a message without the field (unlike DeepSeek and Moonshot), so
// a message that kept no reasoning gets no placeholder, and reasoning another provider wrote
// (the Anthropic answer below) is not passed off as GLM's on a message without tool calls.
func TestZAIPreservedThinking(t *testing.T) {
	own := func(s string) llm.Part {
		raw, _ := json.Marshal(s)
		return llm.Part{Kind: llm.KindReasoning, Text: s, Raw: raw, Dialect: "openai-completions", Provider: "zai"}
	}
	req := &llm.Request{
		Model:  "glm-5.1",
		Stream: true,
		Tools:  []llm.Tool{{Name: "clock", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hello"}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Kind: llm.KindReasoning, Text: "A greeting.", Raw: json.RawMessage(`{"type":"thinking","thinking":"A greeting.","signature":"c2ln"}`), Dialect: "anthropic-messages", Provider: "anthropic"},
				{Kind: llm.KindText, Text: "Hi."},
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "time?"}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				own("The user wants the time: call the clock."),
				{Kind: llm.KindToolCall, CallID: "call_1", Name: "clock", Args: json.RawMessage(`{}`)},
			}},
			{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "call_1", Text: "12:00"}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				own("The clock says 12:00, which is noon."),
				{Kind: llm.KindText, Text: "Noon."},
			}},
			{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "and in an hour?"}}},
		},
	}
	d, err := provider.Dialect("openai-completions", "zai")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, patch string }{
		{"preserved", `{"thinking":{"type":"enabled","clear_thinking":false}}`},
		{"default", `{"thinking":{"type":"enabled"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			llmtest.CheckEncode(t, d, req, llm.Patch{Body: json.RawMessage(c.patch)}, "testdata/zai_thinking_"+c.name+".json", *update)
		})
	}
}
