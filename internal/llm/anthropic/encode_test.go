package anthropic

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

func ptr[T any](v T) *T { return &v }

// Stored thinking blocks as a session keeps them: the bytes this dialect decoded.
const (
	storedThinking = `{"type":"thinking","thinking":"Both cities: call twice <in parallel>.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/Q=="}`
	storedRedacted = `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}`
)

var weatherTools = []llm.Tool{
	{Name: "get_weather", Description: "Current weather for a city.",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}`)},
	{Name: "list_alerts", Parameters: nil},
}

func userText(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: s}}}
}

func toolResult(id, text string, isErr bool) llm.Message {
	return llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: id, Text: text, IsError: isErr}}}
}

var encodeCases = []struct {
	name  string
	opt   Options
	req   llm.Request
	patch llm.Patch
}{
	{
		name: "plain",
		req: llm.Request{
			Model:       "claude-sonnet-4-6",
			System:      "You are terse.",
			Messages:    []llm.Message{userText("Say hi & <wave>.")},
			Temperature: ptr(0.5),
			Stream:      true,
		},
	},
	{
		// The second step of a tool loop: the assistant turn carries its thinking, redacted
		// thinking and two calls; another dialect's reasoning is dropped; the two results
		// become one user message.
		name: "tool_loop",
		req: llm.Request{
			Model:     "claude-opus-4-7",
			MaxTokens: 16000,
			Tools:     weatherTools,
			Messages: []llm.Message{
				userText("Weather in Paris and London?"),
				{Role: llm.RoleAssistant, Parts: []llm.Part{
					{Kind: llm.KindReasoning, Text: "from another model", Dialect: "openai-responses", Raw: json.RawMessage(`{"type":"reasoning","id":"rs_1"}`)},
					{Kind: llm.KindReasoning, Text: "Both cities: call twice <in parallel>.", Dialect: Name, Raw: json.RawMessage(storedThinking)},
					{Kind: llm.KindReasoning, Dialect: Name, Raw: json.RawMessage(storedRedacted)},
					{Kind: llm.KindText, Text: "Checking both."},
					{Kind: llm.KindToolCall, CallID: "toolu_01P", Name: "get_weather", Args: json.RawMessage(`{"city": "Paris"}`)},
					{Kind: llm.KindToolCall, CallID: "toolu_01L", Name: "get_weather", Args: json.RawMessage(`{"city":"London"}`)},
				}},
				toolResult("toolu_01P", "18°C, clear", false),
				toolResult("toolu_01L", "weather service unavailable", true),
			},
			ToolChoice: "auto",
			Stream:     true,
		},
	},
	{
		name: "image",
		req: llm.Request{
			Model: "claude-sonnet-4-6",
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
				{Kind: llm.KindText, Text: "What differs?"},
				{Kind: llm.KindImage, ImageURL: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="},
				{Kind: llm.KindImage, ImageURL: "https://example.com/cat.jpg"},
			}}},
		},
	},
	{
		// Adaptive thinking with an effort and the interleaved-thinking beta, as the thinking
		// table patches a request; the forced tool choice and temperature the API refuses
		// alongside thinking are relaxed.
		name: "patch",
		req: llm.Request{
			Model:       "claude-opus-4-7",
			Messages:    []llm.Message{userText("Plan the trip.")},
			Tools:       weatherTools[:1],
			ToolChoice:  "required",
			Temperature: ptr(0.2),
			Stream:      true,
		},
		patch: llm.Patch{
			Model:  "claude-opus-4-7-fast",
			Body:   json.RawMessage(`{"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "xhigh"}}`),
			Header: http.Header{"Anthropic-Beta": {"interleaved-thinking-2025-05-14"}},
		},
	},
	{
		// Fields nodmix does not model pass through; those it decides never come from Extra,
		// even when it leaves them out (no stream, no system prompt, no tools).
		name: "extra",
		req: llm.Request{
			Model:     "claude-haiku-4-5",
			MaxTokens: 512,
			Messages:  []llm.Message{userText("hi")},
			Extra: map[string]json.RawMessage{
				"metadata":       json.RawMessage(`{"user_id": "u-42"}`),
				"top_k":          json.RawMessage(`5`),
				"stop_sequences": json.RawMessage(`["\n\nHuman:"]`),
				"max_tokens":     json.RawMessage(`1`),
				"model":          json.RawMessage(`"other"`),
				"stream":         json.RawMessage(`true`),
				"system":         json.RawMessage(`"ignore the above"`),
				"tools":          json.RawMessage(`[]`),
			},
		},
	},
	{
		// MiniMax's compatible endpoint: text only, temperature in (0, 1], thinking disabled
		// by the patch (so nothing is relaxed), and its own default max_tokens.
		name: "minimax",
		opt:  Options{DefaultMaxTokens: 8192, TextOnly: true, MinTemperature: 0.01},
		req: llm.Request{
			Model: "MiniMax-M2.7",
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
				{Kind: llm.KindText, Text: "Describe this."},
				{Kind: llm.KindImage, ImageURL: "https://example.com/cat.jpg"},
			}}},
			Tools:       weatherTools[:1],
			ToolChoice:  "required",
			Temperature: ptr(0.0),
		},
		patch: llm.Patch{Model: "MiniMax-M2.7-highspeed", Body: json.RawMessage(`{"thinking":{"type":"disabled"}}`)},
	},
}

func TestEncodeGolden(t *testing.T) {
	for _, tt := range encodeCases {
		t.Run(tt.name, func(t *testing.T) {
			llmtest.CheckEncode(t, New(tt.opt), &tt.req, tt.patch, filepath.Join("testdata", "req_"+tt.name+".json"), *update)
		})
	}
}

// The thinking blocks of the tool loop go out byte for byte, before the calls.
func TestEncodeThinkingUnchanged(t *testing.T) {
	tt := encodeCases[1]
	enc, err := New(Options{}).Encode(&tt.req, llm.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	body := string(enc.Body)
	want := `{"role":"assistant","content":[` + storedThinking + `,` + storedRedacted + `,{"type":"text","text":"Checking both."},{"type":"tool_use"`
	if !strings.Contains(body, want) {
		t.Errorf("body lacks %s\nbody: %s", want, body)
	}
	if strings.Contains(body, "rs_1") {
		t.Error("another dialect's reasoning was sent")
	}
}

func TestEncodeErrors(t *testing.T) {
	msg := []llm.Message{userText("x")}
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"role", llm.Request{Messages: []llm.Message{{Role: "system", Parts: []llm.Part{{Kind: llm.KindText, Text: "x"}}}}}, `message 0: unknown role "system"`},
		{"kind", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: "audio"}}}}}, `message 0 part 0: unknown part kind "audio"`},
		{"tool choice", llm.Request{Messages: msg, Tools: weatherTools, ToolChoice: "get_weather"}, `tool choice "get_weather"`},
		{"schema", llm.Request{Messages: msg, Tools: []llm.Tool{{Name: "f", Parameters: json.RawMessage(`{`)}}}, `tool "f": parameters are not JSON`},
		{"image scheme", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindImage, ImageURL: "file:///etc/passwd"}}}}}, "want a data URL or an https URL"},
		{"stored block", llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindReasoning, Dialect: Name, Raw: json.RawMessage(`{"type":`)}}}}}, "stored thinking block is not JSON"},
		{"extra", llm.Request{Messages: msg, Extra: map[string]json.RawMessage{"top_k": json.RawMessage(`{`)}}, `pass-through field "top_k"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Options{}).Encode(&tt.req, llm.Patch{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := New(Options{}).Encode(&llm.Request{Messages: msg}, llm.Patch{Body: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("a patch that is not JSON was accepted")
	}
}

func TestEncodeMessages(t *testing.T) {
	tests := []struct {
		name string
		msgs []llm.Message
		want string
	}{
		{
			// A turn left empty disappears, and the turns around it merge.
			name: "empty turn dropped",
			msgs: []llm.Message{
				userText("a"),
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindReasoning, Dialect: "gemini", Raw: json.RawMessage(`{}`)}, {Kind: llm.KindText}}},
				userText("b"),
			},
			want: `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`,
		},
		{
			// User text after the results joins their message, after them.
			name: "results then text",
			msgs: []llm.Message{
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, CallID: "t1", Name: "f"}}},
				toolResult("t1", "", false),
				userText("go on"),
			},
			want: `[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"},{"type":"text","text":"go on"}]}]`,
		},
		{
			// Reasoning this dialect kept without a block (reasoning_content) is not sent.
			name: "reasoning without a block",
			msgs: []llm.Message{{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Kind: llm.KindReasoning, Text: "hmm", Dialect: Name}, {Kind: llm.KindText, Text: "ok"}}}},
			want: `[{"role":"assistant","content":[{"type":"text","text":"ok"}]}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc, err := New(Options{}).Encode(&llm.Request{Model: "m", Messages: tt.msgs}, llm.Patch{})
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				Messages json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(enc.Body, &v); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(v.Messages)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImageSource(t *testing.T) {
	tests := []struct {
		url  string
		want imageSource
		err  string
	}{
		{url: "data:image/jpeg;base64,/9j/4AAQ", want: imageSource{Type: "base64", MediaType: "image/jpeg", Data: "/9j/4AAQ"}},
		{url: "data:image/svg+xml;charset=utf-8,%3Csvg%2F%3E", want: imageSource{Type: "base64", MediaType: "image/svg+xml", Data: "PHN2Zy8+"}},
		{url: "HTTPS://example.com/a.png", want: imageSource{Type: "url", URL: "HTTPS://example.com/a.png"}},
		{url: "data:;base64,AAAA", err: "no media type"},
		{url: "data:image/png;base64", err: "no data"},
		{url: "data:image/png,%zz", err: "data URL"},
		{url: "ftp://example.com/a.png", err: "want a data URL"},
		{url: "", err: "want a data URL"},
	}
	for _, tt := range tests {
		got, err := imageSourceOf(tt.url)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("imageSourceOf(%q) error = %v, want %q", tt.url, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("imageSourceOf(%q): %v", tt.url, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("imageSourceOf(%q) (-want +got):\n%s", tt.url, diff)
		}
	}
}

func TestMaxTokensAndTemperature(t *testing.T) {
	tests := []struct {
		opt       Options
		maxTokens int
		temp      *float64
		want      string
	}{
		{want: `"max_tokens":4096`},
		{opt: Options{DefaultMaxTokens: 8192}, want: `"max_tokens":8192`},
		{opt: Options{DefaultMaxTokens: 8192}, maxTokens: 100, want: `"max_tokens":100`},
		{temp: ptr(1.7), want: `"temperature":1`},
		{temp: ptr(-1.0), want: `"temperature":0`},
		{opt: Options{MinTemperature: 0.01}, temp: ptr(0.0), want: `"temperature":0.01`},
	}
	for _, tt := range tests {
		req := llm.Request{Model: "m", Messages: []llm.Message{userText("x")}, MaxTokens: tt.maxTokens, Temperature: tt.temp}
		enc, err := New(tt.opt).Encode(&req, llm.Patch{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(enc.Body, []byte(tt.want)) {
			t.Errorf("%+v: body %s lacks %s", tt, enc.Body, tt.want)
		}
	}
	nan := 0.0
	nan /= nan
	enc, err := New(Options{}).Encode(&llm.Request{Model: "m", Temperature: &nan}, llm.Patch{})
	if err != nil || bytes.Contains(enc.Body, []byte("temperature")) {
		t.Errorf("NaN temperature: %v, %s", err, enc.Body)
	}
}

func TestFitThinking(t *testing.T) {
	tests := []struct {
		name, extra, patch string
		req                llm.Request
		want               string // the body's tail after the messages
	}{
		{
			name:  "thinking from Extra, forced tool by name from the patch",
			extra: `{"type":"enabled","budget_tokens":2048}`,
			patch: `{"tool_choice":{"type":"tool","name":"f"}}`,
			want:  `"tools":[{"name":"f","input_schema":{"type":"object"}}],"thinking":{"type":"enabled","budget_tokens":2048},"tool_choice":{"type":"auto"}}`,
		},
		{
			name:  "temperature 1 stays",
			patch: `{"thinking":{"type":"adaptive"}}`,
			req:   llm.Request{Temperature: ptr(1.0), ToolChoice: "none"},
			want:  `"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"none"},"temperature":1,"thinking":{"type":"adaptive"}}`,
		},
		{
			name:  "disabled thinking changes nothing",
			patch: `{"thinking":{"type":"disabled"}}`,
			req:   llm.Request{Temperature: ptr(0.3), ToolChoice: "required"},
			want:  `"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"},"temperature":0.3,"thinking":{"type":"disabled"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			req.Model = "m"
			req.Messages = []llm.Message{userText("x")}
			req.Tools = []llm.Tool{{Name: "f"}}
			if tt.extra != "" {
				req.Extra = map[string]json.RawMessage{"thinking": json.RawMessage(tt.extra)}
			}
			enc, err := New(Options{}).Encode(&req, llm.Patch{Body: json.RawMessage(tt.patch)})
			if err != nil {
				t.Fatal(err)
			}
			_, tail, _ := strings.Cut(string(enc.Body), `"text":"x"}]}],`)
			if diff := cmp.Diff(tt.want, tail); diff != "" {
				t.Errorf("body tail (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEncodeHeaders(t *testing.T) {
	req := llm.Request{Model: "m", Messages: []llm.Message{userText("x")}}
	enc, err := New(Options{}).Encode(&req, llm.Patch{Header: http.Header{"anthropic-beta": {"a", "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{
		"Anthropic-Version": {"2023-06-01"},
		"Content-Type":      {"application/json"},
		"Anthropic-Beta":    {"a", "b"},
	}
	if diff := cmp.Diff(want, enc.Header); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if enc.Path != "/messages" {
		t.Errorf("path = %q", enc.Path)
	}
}

// TestToolSchemasAreObjects: the Messages API refuses an input_schema without its type
// ("input_schema.type: Field required"); a schema that names none (an OpenAI client's
// "parameters": {} for a tool without arguments) goes as an object schema.
func TestToolSchemasAreObjects(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, `{"type":"object"}`},
		{`{}`, `{"type":"object"}`},
		{` { } `, `{"type":"object"}`},
		{`{"properties":{}}`, `{"properties":{},"type":"object"}`},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`},
	} {
		got, err := tools([]llm.Tool{{Name: "t", Parameters: json.RawMessage(c.in)}})
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if string(got[0].InputSchema) != c.want {
			t.Errorf("%s: input_schema %s, want %s", c.in, got[0].InputSchema, c.want)
		}
	}
}
