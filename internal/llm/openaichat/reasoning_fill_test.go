package openaichat

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
)

// fillTranscript is a turn whose first tool call came without reasoning (it ran with thinking
// off, or the model called at once), then an answer with reasoning, then a user turn without
// tools whose answer has no reasoning.
func fillTranscript() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "What is 2+2? Use the calculator."}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindToolCall, CallID: "call_1", Name: "calc", Args: json.RawMessage(`{"expr":"2+2"}`)},
		}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "call_1", Text: "4"}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindReasoning, Text: "Answer it.", Raw: json.RawMessage(`"Answer it."`), Dialect: Name},
			{Kind: llm.KindText, Text: "4"},
		}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "Thanks."}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindText, Text: "You're welcome."}}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "And 3+3?"}}},
	}
}

// TestReasoningContentFill checks the reasoning_content each assistant message of
// fillTranscript carries (absent: "-").
//
// DeepSeek, https://api-docs.deepseek.com/guides/thinking_mode: "Between two user messages, if
// the model performed a tool call, the intermediate assistant's reasoning_content must
// participate in the context concatenation and must be passed back to the API in all
// subsequent user turns"; without a tool call it "will be ignored". Its tool-call sample
// appends every response message, the final answer's too. A tool-call message without the
// field is a 400 "The reasoning_content in the thinking mode must be passed back to the API"
// (deepseek-ai/deepseek-harness#739: also when the turn had no reasoning, "" passes).
//
// Moonshot, https://platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model: reasoning_content
// stays in the context of a tool loop; without it a tool-call message is a 400 "thinking is
// enabled but reasoning_content is missing in assistant tool call message at index N", and ""
// reads as missing (theopenco/llmgateway#2093, earendil-works/pi#4178: " " passes).
func TestReasoningContentFill(t *testing.T) {
	deepseek := Quirks{MaxTokensField: "max_tokens", ReasoningContent: true, ReasoningRequired: true, ReasoningEvery: true}
	moonshot := Quirks{MaxTokensField: "max_tokens", ReasoningContent: true, ReasoningRequired: true, ReasoningPlaceholder: " ", AutoToolChoiceWhenThinking: true}
	zai := Quirks{MaxTokensField: "max_tokens", ReasoningContent: true, ReasoningKept: true, ToolStream: true}
	on := json.RawMessage(`{"thinking":{"type":"enabled"},"reasoning_effort":"high"}`)
	off := json.RawMessage(`{"thinking":{"type":"disabled"}}`)
	for _, tc := range []struct {
		name  string
		q     Quirks
		extra map[string]json.RawMessage
		patch json.RawMessage
		want  []string // per assistant message
	}{
		{name: "deepseek thinking on", q: deepseek, patch: on, want: []string{`""`, `"Answer it."`, `""`}},
		{name: "deepseek default thinking", q: deepseek, want: []string{`""`, `"Answer it."`, `""`}},
		{name: "deepseek thinking off", q: deepseek, patch: off, want: []string{"-", "-", "-"}},
		{name: "deepseek off in extra, on in patch", q: deepseek, extra: map[string]json.RawMessage{"thinking": json.RawMessage(`{"type":"disabled"}`)}, patch: on, want: []string{`""`, `"Answer it."`, `""`}},
		{name: "deepseek off in extra", q: deepseek, extra: map[string]json.RawMessage{"thinking": json.RawMessage(`{"type":"disabled"}`)}, want: []string{"-", "-", "-"}},
		{name: "moonshot thinking on", q: moonshot, patch: json.RawMessage(`{"thinking":{"type":"enabled"}}`), want: []string{`" "`, "-", "-"}},
		{name: "moonshot thinking off", q: moonshot, patch: off, want: []string{"-", "-", "-"}},
		// Z.AI documents no refusal (no placeholder) but Preserved Thinking: the answer's own
		// reasoning goes back too. See provider.TestZAIPreservedThinking.
		{name: "zai keeps its own", q: zai, patch: json.RawMessage(`{"thinking":{"type":"enabled"}}`), want: []string{"-", `"Answer it."`, "-"}},
		{name: "zai thinking off", q: zai, patch: off, want: []string{"-", `"Answer it."`, "-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := llm.Request{Model: "m", Tools: tools(), Messages: fillTranscript(), Extra: tc.extra}
			enc, err := New(tc.q).Encode(&req, llm.Patch{Body: tc.patch})
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
				if m.Role != "assistant" {
					continue
				}
				if m.ReasoningContent == nil {
					got = append(got, "-")
				} else {
					got = append(got, string(m.ReasoningContent))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reasoning_content per assistant message (-want +got):\n%s", diff)
			}
		})
	}
}
