package gemini

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
	Description: "Current weather for a city. Use <city> names, not codes & abbreviations.",
	Parameters: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
		"properties":{"city":{"type":"string"},"unit":{"$ref":"#/$defs/unit"}},"required":["city"],
		"additionalProperties":false,"$defs":{"unit":{"enum":["celsius","fahrenheit"]}}}`),
}

// toolLoop is a transcript after one parallel-call step that Gemini produced with thinking on.
func toolLoop() []llm.Message {
	return []llm.Message{
		userText("Weather in Paris and Berlin?"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindReasoning, Text: "unsigned summary, not sent back", Dialect: Name},
			{Kind: llm.KindReasoning, Text: "signed thought", Dialect: Name, Meta: metaJSON("VEhPVUdIVA==", "")},
			{Kind: llm.KindText, Text: "", Dialect: Name, Meta: metaJSON("RU1QVFk=", "")},
			{Kind: llm.KindToolCall, CallID: "call_0", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`), Dialect: Name, Meta: metaJSON("RlVOQ19TSUdfQQ==", "")},
			{Kind: llm.KindToolCall, CallID: "fc-2", Name: "get_weather", Args: json.RawMessage(`{"city":"Berlin"}`), Dialect: Name, Meta: metaJSON("", "fc-2")},
		}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "call_0", Text: "18°C, clear"}}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "fc-2", Text: "upstream timed out", IsError: true}}},
	}
}

func TestEncodeGolden(t *testing.T) {
	tests := []struct {
		name  string
		req   llm.Request
		patch llm.Patch
	}{
		{
			name: "plain",
			req: llm.Request{Model: "gemini-2.5-flash", System: "You are terse.", Messages: []llm.Message{userText("Hi <there> & bye")},
				MaxTokens: 1024, Temperature: temp(0.2)},
		},
		{
			name: "plain_stream",
			req:  llm.Request{Model: "gemini-2.5-flash", Messages: []llm.Message{userText("Hi")}, Stream: true},
		},
		{
			name: "tool_loop",
			req: llm.Request{Model: "gemini-3-pro-preview", Messages: toolLoop(), Tools: []llm.Tool{weatherTool, {Name: "now", Description: "The time."}},
				ToolChoice: "required", Stream: true},
		},
		{
			// A transcript begun on another provider: its reasoning is dropped, its call
			// carries the documented placeholder signature on a model that validates them.
			name: "foreign_history",
			req: llm.Request{Model: "gemini-3-flash-preview", Messages: []llm.Message{
				userText("What time is it?"),
				{Role: llm.RoleAssistant, Parts: []llm.Part{
					{Kind: llm.KindReasoning, Text: "thinking", Dialect: "anthropic-messages", Raw: json.RawMessage(`{"type":"thinking","signature":"x"}`)},
					{Kind: llm.KindText, Text: "Checking.", Dialect: "openai-responses", Meta: json.RawMessage(`{"id":"msg_1"}`)},
					{Kind: llm.KindToolCall, CallID: "call_abc", Name: "now", Args: json.RawMessage(`{`)},
				}},
				{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "call_abc", Name: "now", Text: "12:00"}}},
			}, Tools: []llm.Tool{{Name: "now"}}, ToolChoice: "auto"},
		},
		{
			name: "image",
			req: llm.Request{Model: "gemini-2.5-flash", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
				{Kind: llm.KindText, Text: "Compare these."},
				{Kind: llm.KindImage, ImageURL: "data:image/png;base64,iVBORw0KGgo="},
				{Kind: llm.KindImage, ImageURL: "data:image/svg+xml,%3Csvg%2F%3E"},
				{Kind: llm.KindImage, ImageURL: "https://example.com/photos/cat.jpg?size=large"},
			}}}},
		},
		{
			name: "patch",
			req: llm.Request{Model: "gemini-3-flash-preview", Messages: []llm.Message{userText("Hi")}, MaxTokens: 2048,
				Tools: []llm.Tool{{Name: "now"}}, ToolChoice: "none", Stream: true},
			patch: llm.Patch{
				Model:  "gemini-3-flash-lite",
				Body:   json.RawMessage(`{"generationConfig":{"thinkingConfig":{"thinkingLevel":"LOW","includeThoughts":true}},"toolConfig":null}`),
				Header: http.Header{"X-Goog-Test": {"1"}},
			},
		},
		{
			name: "extra",
			req: llm.Request{Model: "gemini-2.5-pro", Messages: []llm.Message{userText("Hi")}, MaxTokens: 100,
				Extra: map[string]json.RawMessage{
					"safetySettings":   json.RawMessage(`[ {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"} ]`),
					"cachedContent":    json.RawMessage(`"cachedContents/abc"`),
					"generationConfig": json.RawMessage(`{"maxOutputTokens":5,"topK":40}`), // nodmix's own members win
					"tools":            json.RawMessage(`[{"googleSearch":{}}]`),           // decided by nodmix, even when absent
				}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			llmtest.CheckEncode(t, New(), &tc.req, tc.patch, filepath.Join("testdata", "encode_"+tc.name+".json"), *update)
		})
	}
}

func TestEncodePath(t *testing.T) {
	tests := []struct {
		model, rename string
		stream        bool
		want          string
	}{
		{"gemini-2.5-flash", "", false, "/models/gemini-2.5-flash:generateContent"},
		{"gemini-2.5-flash", "", true, "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"models/gemini-3-pro-preview", "", false, "/models/gemini-3-pro-preview:generateContent"},
		{"gemini-2.5-flash", "gemini-2.5-flash-lite", true, "/models/gemini-2.5-flash-lite:streamGenerateContent?alt=sse"},
		{"odd/model id?key=x", "", false, "/models/odd%2Fmodel%20id%3Fkey=x:generateContent"},
	}
	for _, tc := range tests {
		enc, err := New().Encode(&llm.Request{Model: tc.model, Stream: tc.stream}, llm.Patch{Model: tc.rename})
		if err != nil {
			t.Fatal(err)
		}
		if enc.Path != tc.want {
			t.Errorf("model %q stream %v: path %q, want %q", tc.model, tc.stream, enc.Path, tc.want)
		}
		if strings.Contains(enc.Path, "key=") && !strings.Contains(enc.Path, "%3Fkey=") {
			t.Errorf("path %q carries a query key", enc.Path)
		}
	}
}

func TestSignatureSentinelOnlyWhereValidated(t *testing.T) {
	msgs := []llm.Message{
		userText("now?"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindToolCall, CallID: "a", Name: "now", Args: json.RawMessage(`{}`)},
			{Kind: llm.KindToolCall, CallID: "b", Name: "now", Args: json.RawMessage(`{}`)},
		}},
	}
	for model, want := range map[string]int{
		"gemini-3-flash-preview": 1, "gemini-flash-latest": 1, "gemini-2.5-pro": 0, "gemini-1.5-flash": 0, "gemma-3-27b-it": 0,
	} {
		enc, err := New().Encode(&llm.Request{Model: model, Messages: msgs}, llm.Patch{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(enc.Body), skipSignature); got != want {
			t.Errorf("%s: %d placeholder signatures, want %d", model, got, want)
		}
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
		{"orphan result", llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "x"}}}}}, "no tool name"},
		{"bad image", llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindImage, ImageURL: "cat.png"}}}}}, "neither a data URL"},
		{"data URL without type", llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindImage, ImageURL: "data:;base64,AA=="}}}}}, "no media type"},
		{"schema not an object", llm.Request{Model: "m", Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}, `tool "t"`},
		{"bad patch", llm.Request{Model: "m"}, "merge patch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := llm.Patch{}
			if tc.name == "bad patch" {
				p.Body = json.RawMessage(`{"a":`)
			}
			_, err := New().Encode(&tc.req, p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDropRootKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"$schema":"x","type":"object"}`, `{"type":"object"}`},
		{`{"type":"object", "$schema" : "x"}`, `{"type":"object"}`},
		{`{"a":{"$schema":"nested"},"$schema":"x","b":["$schema",{"c":"}"}]}`, `{"a":{"$schema":"nested"},"b":["$schema",{"c":"}"}]}`},
		{`{"a\"$schema":1,"$schema":2}`, `{"a\"$schema":1}`},
		{`{"$schema":"only"}`, `{}`},
		{`{"properties":{"$schema":{}}}`, `{"properties":{"$schema":{}}}`},
		{`{"$schema":"cut`, `{"$schema":"cut`},
		{`{"$schema":{"a":1}`, `{"$schema":{"a":1}`},
	}
	for _, tc := range tests {
		if got := string(dropRootKey([]byte(tc.in), "$schema")); got != tc.want {
			t.Errorf("dropRootKey(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
