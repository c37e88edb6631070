package openaichat

import (
	"encoding/json"
	"flag"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func ptr[T any](v T) *T { return &v }

// reasoningTranscript has reasoning parts of this dialect and of another.
func reasoningTranscript() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "What is 2+2? Use the calculator."}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindReasoning, Text: "The user wants a tool.", Raw: json.RawMessage(`"The user wants a tool."`), Dialect: Name},
			{Kind: llm.KindToolCall, CallID: "call_1", Name: "calc", Args: json.RawMessage(`{"expr":"2+2"}`)},
		}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "call_1", Text: "4"}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindReasoning, Text: "Answer it.", Raw: json.RawMessage(`"Answer it."`), Dialect: Name},
			{Kind: llm.KindText, Text: "4"},
		}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "And 3+3?"}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			// Produced by another dialect before a model switch: its opaque bytes are not sent.
			{Kind: llm.KindReasoning, Text: "Thinking about 3+3.", Raw: json.RawMessage(`{"type":"thinking","signature":"sig"}`), Dialect: "anthropic-messages"},
			{Kind: llm.KindToolCall, CallID: "toolu_2", Name: "calc", Args: json.RawMessage(`{"expr":"3+3"}`)},
		}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "toolu_2", Text: "6"}}},
	}
}

func detailsTranscript() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "Weather in Boston?"}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindReasoning, Text: "Need the tool.", Raw: json.RawMessage(`[{"type":"reasoning.text","text":"Need the tool.","signature":"EqQB","format":"anthropic-claude-v1","index":0}]`), Dialect: Name},
			{Kind: llm.KindToolCall, CallID: "toolu_1", Name: "weather", Args: json.RawMessage(`{"city":"Boston"}`)},
		}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "toolu_1", Text: `{"temperature":45}`}}},
	}
}

func tools() []llm.Tool {
	return []llm.Tool{
		{Name: "weather", Description: "Current weather for a city.", Parameters: llmtest.WeatherSchema},
		{Name: "clock", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
}

type encodeCase struct {
	name  string
	q     Quirks
	req   llm.Request
	patch llm.Patch
}

func encodeCases() []encodeCase {
	return []encodeCase{
		{name: "minimal", req: llm.Request{Model: "gpt-5.5", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hi"}}}}}},
		{name: "settings", req: llm.Request{
			Model: "gpt-5.5", System: "You are terse.", MaxTokens: 1024, Temperature: ptr(0.2),
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hi"}}}},
		}},
		{name: "stream_tools", req: llm.Request{
			Model: "gpt-5.5", Stream: true, Tools: tools(), ToolChoice: "required",
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "time?"}}}},
		}},
		{name: "transcript", req: llm.Request{Model: "gpt-5.5", System: "sys", Tools: tools(), Messages: llmtest.ToolLoop()}},
		{name: "quirk_fields", q: Quirks{MaxTokensField: "max_tokens", SystemRole: "developer", NoStreamUsage: true}, req: llm.Request{
			Model: "o4-mini", System: "sys", MaxTokens: 99, Stream: true,
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hi"}}}},
		}},
		{name: "reasoning_dropped_without_quirk", req: llm.Request{Model: "gpt-5.5", Messages: reasoningTranscript()}},
		{name: "deepseek_reasoning_content", q: Quirks{MaxTokensField: "max_tokens", ReasoningContent: true}, req: llm.Request{
			Model: "deepseek-v4-pro", Stream: true, Tools: tools(), Messages: reasoningTranscript(),
		}, patch: llm.Patch{Body: json.RawMessage(`{"thinking":{"type":"enabled"},"reasoning_effort":"max"}`)}},
		{name: "openrouter_reasoning_details", q: Quirks{MaxTokensField: "max_tokens", ReasoningDetails: true}, req: llm.Request{
			Model: "anthropic/claude-opus-4.7", Tools: tools(), Messages: detailsTranscript(),
		}, patch: llm.Patch{Body: json.RawMessage(`{"reasoning":{"effort":"xhigh","exclude":false}}`)}},
		{name: "extra_and_patch", req: llm.Request{
			Model: "gpt-5.5", Temperature: ptr(1.0), MaxTokens: 10,
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hi"}}}},
			Extra: map[string]json.RawMessage{
				"seed":  json.RawMessage(`42`),
				"model": json.RawMessage(`"ignored-client-model"`),
				"user":  json.RawMessage(` "u-1" `),
			},
		}, patch: llm.Patch{
			Model:  "gpt-5.5-priority",
			Body:   json.RawMessage(`{"reasoning_effort":"high","temperature":null,"service_tier":"priority","seed":7}`),
			Header: http.Header{"X-Trace": {"a", "b"}, "content-type": {"application/json; charset=utf-8"}},
		}},
		{name: "moonshot_forced_choice_thinking", q: Quirks{MaxTokensField: "max_tokens", ReasoningContent: true, AutoToolChoiceWhenThinking: true}, req: llm.Request{
			Model: "kimi-k2.6", Tools: tools(), ToolChoice: "required",
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "time?"}}}},
		}, patch: llm.Patch{Body: json.RawMessage(`{"thinking":{"type":"enabled","keep":"all"}}`)}},
		{name: "moonshot_forced_choice_default_thinking", q: Quirks{MaxTokensField: "max_tokens", AutoToolChoiceWhenThinking: true}, req: llm.Request{
			Model: "kimi-k3", Tools: tools(),
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "time?"}}}},
			Extra:    map[string]json.RawMessage{"tool_choice": json.RawMessage(`{"type":"function","function":{"name":"clock"}}`)},
		}},
		{name: "moonshot_forced_choice_thinking_off", q: Quirks{MaxTokensField: "max_tokens", AutoToolChoiceWhenThinking: true}, req: llm.Request{
			Model: "kimi-k2.6", Tools: tools(), ToolChoice: "required",
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "time?"}}}},
		}, patch: llm.Patch{Body: json.RawMessage(`{"thinking":{"type":"disabled"}}`)}},
		{name: "zai_tool_stream", q: Quirks{MaxTokensField: "max_tokens", ReasoningContent: true, ToolStream: true}, req: llm.Request{
			Model: "glm-5.2", Stream: true, Tools: tools(),
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "time?"}}}},
		}},
		{name: "invalid_args_sent_as_written", req: llm.Request{Model: "gpt-5.5", Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "go"}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Kind: llm.KindToolCall, CallID: "c1", Name: "weather", Args: json.RawMessage(`"{\"city\": \"Par"`)},
				{Kind: llm.KindToolCall, CallID: "c2", Name: "clock"},
			}},
			{Role: llm.RoleTool, Parts: []llm.Part{
				{Kind: llm.KindToolResult, CallID: "c1", Text: "arguments are not valid JSON", IsError: true},
				{Kind: llm.KindToolResult, CallID: "c2", Text: ""},
			}},
		}}},
	}
}

func TestEncodeGolden(t *testing.T) {
	for _, tc := range encodeCases() {
		t.Run(tc.name, func(t *testing.T) {
			llmtest.CheckEncode(t, New(tc.q), &tc.req, tc.patch, filepath.Join("testdata", "encode", tc.name+".json"), *update)
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	user := []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hi"}}}}
	tests := []struct {
		name  string
		q     Quirks
		req   llm.Request
		patch llm.Patch
		want  string
	}{
		{"role", Quirks{}, llm.Request{Model: "m", Messages: []llm.Message{{Role: "system"}}}, llm.Patch{}, `message 0: unknown role "system"`},
		{"tool choice", Quirks{}, llm.Request{Model: "m", Messages: user, ToolChoice: "any"}, llm.Patch{}, `tool choice "any"`},
		{"quirk", Quirks{MaxTokensField: "max_output_tokens"}, llm.Request{Model: "m", Messages: user}, llm.Patch{}, `quirk MaxTokensField "max_output_tokens"`},
		{"schema", Quirks{}, llm.Request{Model: "m", Messages: user, Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`{bad`)}}}, llm.Patch{}, "encode: "},
		{"extra", Quirks{}, llm.Request{Model: "m", Messages: user, Extra: map[string]json.RawMessage{"x": json.RawMessage(`{bad`)}}, llm.Patch{}, `pass-through field "x"`},
		{"patch", Quirks{}, llm.Request{Model: "m", Messages: user}, llm.Patch{Body: json.RawMessage(`{"a":`)}, "merge patch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.q).Encode(&tt.req, tt.patch)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestExtraNeverDecidesWhatNodmixDecides: pass-through fields nodmix decides even when it
// leaves them out (a stream on a call read as one document, tools the run does not have, the
// other name of the token cap) do not reach the body; the others do.
func TestExtraNeverDecidesWhatNodmixDecides(t *testing.T) {
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hi"}}}}, MaxTokens: 100,
		Extra: map[string]json.RawMessage{
			"stream":         json.RawMessage(`true`),
			"stream_options": json.RawMessage(`{"include_usage":true}`),
			"tools":          json.RawMessage(`[{"type":"function","function":{"name":"rm_rf"}}]`),
			"max_tokens":     json.RawMessage(`5`),
			"tool_stream":    json.RawMessage(`true`),
			"temperature":    json.RawMessage(`2`),
			"messages":       json.RawMessage(`[]`),
			"seed":           json.RawMessage(`7`),
		}}
	enc, err := New(Quirks{MaxTokensField: "max_completion_tokens"}).Encode(&req, llm.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":100,"seed":7}`
	if string(enc.Body) != want {
		t.Errorf("body %s\nwant %s", enc.Body, want)
	}
}
