package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// benchRequest is a mid-loop request: 10 messages (text, signed calls, results) and 20 tools.
func benchRequest() *llm.Request {
	req := &llm.Request{Model: "gemini-3-flash-preview", System: "You are a careful agent.", Stream: true, MaxTokens: 4096}
	for i := range 20 {
		req.Tools = append(req.Tools, llm.Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			Description: "Does one thing well, described in a sentence or two for the model.",
			Parameters:  json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["path"]}`),
		})
	}
	req.Messages = append(req.Messages, userText(strings.Repeat("Please look into this. ", 20)))
	for i := range 3 {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Kind: llm.KindReasoning, Text: "thinking about it", Dialect: Name, Meta: metaJSON(strings.Repeat("A", 200), "")},
				{Kind: llm.KindToolCall, CallID: id, Name: "tool_03", Args: json.RawMessage(`{"path":"/srv/data","limit":10}`), Dialect: Name, Meta: metaJSON(strings.Repeat("B", 200), "")},
			}},
			llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: id, Text: strings.Repeat("result line\n", 40)}}},
			userText("and then?"),
		)
	}
	return req
}

func BenchmarkEncode(b *testing.B) {
	req := benchRequest()
	llmtest.BenchEncode(b, New(), req, llm.Patch{Body: json.RawMessage(`{"generationConfig":{"thinkingConfig":{"thinkingLevel":"LOW"}}}`)})
}

// benchStream is 200 chunks: 40 of thought summary, 158 of answer text, a signed call and the end.
func benchStream() []byte {
	var buf bytes.Buffer
	for i := range 198 {
		thought := ""
		if i < 40 {
			thought = `,"thought":true`
		}
		fmt.Fprintf(&buf, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"token %d of a longer streamed answer \"%s}],\"role\":\"model\"},\"index\":0}],\"modelVersion\":\"gemini-3-flash-preview\",\"responseId\":\"r\"}\n\n", i, thought)
	}
	buf.WriteString(`data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"tool_03","args":{"path":"/srv"}},"thoughtSignature":"` + strings.Repeat("C", 300) + `"}],"role":"model"},"index":0}]}` + "\n\n")
	buf.WriteString(`data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":900,"candidatesTokenCount":400,"thoughtsTokenCount":120,"totalTokenCount":1420}}` + "\n\n")
	return buf.Bytes()
}

func BenchmarkDecodeStream(b *testing.B) {
	data := benchStream()
	llmtest.BenchDecode(b, New(), data, true)
}
