package ollama

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

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func temp(f float64) *float64 { return &f }

func userText(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: s}}}
}

var weatherTool = llm.Tool{
	Name:        "get_weather",
	Description: "Current weather for a <city>.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

func TestEncodeGolden(t *testing.T) {
	tests := []struct {
		name  string
		req   llm.Request
		patch llm.Patch
	}{
		{
			name: "plain",
			req: llm.Request{Model: "llama3.2", System: "You are terse.", Messages: []llm.Message{userText("Hi <there> & bye")},
				MaxTokens: 512, Temperature: temp(0.3)},
		},
		{
			name: "plain_stream",
			req:  llm.Request{Model: "llama3.2", Messages: []llm.Message{userText("Hi")}, Stream: true},
		},
		{
			// Ollama's own thinking goes back; another provider's reasoning does not.
			name: "tool_loop",
			req: llm.Request{Model: "qwen3", Stream: true, Tools: []llm.Tool{weatherTool, {Name: "now"}}, Messages: []llm.Message{
				userText("Weather in Paris and Berlin?"),
				{Role: llm.RoleAssistant, Parts: []llm.Part{
					{Kind: llm.KindReasoning, Text: "Two calls.", Dialect: Name},
					{Kind: llm.KindReasoning, Text: "foreign", Dialect: "anthropic-messages", Raw: json.RawMessage(`{"type":"thinking"}`)},
					{Kind: llm.KindText, Text: "Checking both."},
					{Kind: llm.KindToolCall, CallID: "call_0", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
					{Kind: llm.KindToolCall, CallID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Ber`)},
				}},
				{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "call_0", Text: "18°C"}}},
				{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "call_1", Name: "get_weather", Text: "bad arguments", IsError: true}}},
			}},
		},
		{
			name: "image",
			req: llm.Request{Model: "llava", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
				{Kind: llm.KindText, Text: "What is in these?"},
				{Kind: llm.KindImage, ImageURL: "data:image/png;base64,iVBORw0KGgo="},
				{Kind: llm.KindText, Text: "Keep it short."},
				{Kind: llm.KindImage, ImageURL: "data:image/svg+xml,%3Csvg%2F%3E"},
			}}}},
		},
		{
			name: "patch",
			req:  llm.Request{Model: "qwen3", Messages: []llm.Message{userText("Hi")}, MaxTokens: 100, Tools: []llm.Tool{weatherTool}, ToolChoice: "none"},
			patch: llm.Patch{
				Model:  "qwen3:32b",
				Body:   json.RawMessage(`{"think":"high","options":{"num_predict":null,"num_ctx":8192}}`),
				Header: http.Header{"x-test": {"1"}},
			},
		},
		{
			name: "extra",
			req: llm.Request{Model: "llama3.2", Messages: []llm.Message{userText("Hi")}, Stream: true, MaxTokens: 64,
				Extra: map[string]json.RawMessage{
					"keep_alive": json.RawMessage(`"10m"`),
					"format":     json.RawMessage(`{ "type": "object" }`),
					"think":      json.RawMessage(`false`),
					"options":    json.RawMessage(`{"num_ctx":4096,"num_predict":1}`), // nodmix's own members win
					"stream":     json.RawMessage(`false`),                            // decided by nodmix
					"tools":      json.RawMessage(`[]`),                               // decided by nodmix, even when absent
				}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			llmtest.CheckEncode(t, New(), &tc.req, tc.patch, filepath.Join("testdata", "encode_"+tc.name+".json"), *update)
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"no model", llm.Request{}, "no model"},
		{"unknown role", llm.Request{Model: "m", Messages: []llm.Message{{Role: "system"}}}, `unknown role "system"`},
		{"image URL", llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindImage, ImageURL: "https://example.com/a.png"}}}}}, "inline images only"},
		{"data URL without data", llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindImage, ImageURL: "data:image/png;base64"}}}}}, "no data"},
		{"bad schema", llm.Request{Model: "m", Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`{`)}}}, "ollama:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New().Encode(&tc.req, llm.Patch{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestEncodeStreamAlwaysSent(t *testing.T) {
	enc, err := New().Encode(&llm.Request{Model: "m"}, llm.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"model":"m","messages":[],"stream":false}`; string(enc.Body) != want {
		t.Fatalf("body = %s, want %s", enc.Body, want)
	}
}
