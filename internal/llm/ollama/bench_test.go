package ollama

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// benchRequest is a mid-loop request: 10 messages (text, thinking, calls, results) and 20 tools.
func benchRequest() *llm.Request {
	req := &llm.Request{Model: "qwen3", System: "You are a careful agent.", Stream: true, MaxTokens: 4096}
	for i := range 20 {
		req.Tools = append(req.Tools, llm.Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			Description: "Does one thing well, described in a sentence or two for the model.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["path"]}`),
		})
	}
	req.Messages = append(req.Messages, userText(strings.Repeat("Please look into this. ", 20)))
	for i := range 3 {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Kind: llm.KindReasoning, Text: strings.Repeat("thinking about it ", 10), Dialect: Name},
				{Kind: llm.KindToolCall, CallID: id, Name: "tool_03", Args: json.RawMessage(`{"path":"/srv/data","limit":10}`)},
			}},
			llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: id, Text: strings.Repeat("result line\n", 40)}}},
			userText("and then?"),
		)
	}
	return req
}

func BenchmarkEncode(b *testing.B) {
	req := benchRequest()
	llmtest.BenchEncode(b, New(), req, llm.Patch{Body: json.RawMessage(`{"think":"low"}`)})
}

// benchStream is 200 lines: 40 of thinking, 158 of answer text, a call and the done line.
func benchStream() []byte {
	var buf bytes.Buffer
	for i := range 198 {
		field := "content"
		if i < 40 {
			field = "thinking"
		}
		fmt.Fprintf(&buf, "{\"model\":\"qwen3\",\"created_at\":\"2026-08-21T10:00:00.000000Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"%s\":\"token %d of a longer streamed answer \"},\"done\":false}\n", field, i)
	}
	buf.WriteString(`{"model":"qwen3","created_at":"2026-08-21T10:00:00Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"tool_03","arguments":{"path":"/srv"}}}]},"done":false}` + "\n")
	buf.WriteString(`{"model":"qwen3","created_at":"2026-08-21T10:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":900,"eval_count":520}` + "\n")
	return buf.Bytes()
}

func BenchmarkDecodeStream(b *testing.B) {
	data := benchStream()
	llmtest.BenchDecode(b, New(), data, true)
}
