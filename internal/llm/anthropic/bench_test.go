package anthropic

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
	req := &llm.Request{Model: "claude-sonnet-4-6", System: strings.Repeat("You are a careful agent. ", 40), Stream: true}
	for i := range 20 {
		req.Tools = append(req.Tools, llm.Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			Description: "Does one thing well, with a description of some length to be realistic.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a path"},"limit":{"type":"integer"}},"required":["path"]}`),
		})
	}
	req.Messages = append(req.Messages, userText(strings.Repeat("Please look into the build failure. ", 10)))
	for i := range 3 {
		id := fmt.Sprintf("toolu_%02d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Kind: llm.KindReasoning, Text: "thinking", Dialect: Name, Raw: json.RawMessage(`{"type":"thinking","thinking":"` + strings.Repeat("Consider the options. ", 20) + `","signature":"` + strings.Repeat("QUJD", 64) + `"}`)},
				{Kind: llm.KindText, Text: "Let me check."},
				{Kind: llm.KindToolCall, CallID: id, Name: "tool_01", Args: json.RawMessage(`{"path":"src/main.go","limit":200}`)},
			}},
			toolResult(id, strings.Repeat("line of output\n", 50), false),
			userText("continue"),
		)
	}
	return req
}

func BenchmarkEncode(b *testing.B) {
	patch := llm.Patch{Body: json.RawMessage(`{"thinking":{"type":"adaptive"},"output_config":{"effort":"high"}}`)}
	llmtest.BenchEncode(b, New(Options{}), benchRequest(), patch)
}

// benchStream is a 200-event stream: thinking, text and two tool calls in pieces.
func benchStream() []byte {
	var s bytes.Buffer
	ev := func(name, data string) { fmt.Fprintf(&s, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_b","type":"message","role":"assistant","content":[],"usage":{"input_tokens":900,"output_tokens":1}}}`)
	n := 1
	block := func(i int, start string, deltas int, delta func(int) string) {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, start))
		for k := range deltas {
			ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, i, delta(k)))
		}
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		n += deltas + 2
	}
	block(0, `{"type":"thinking","thinking":"","signature":""}`, 60, func(k int) string {
		if k == 59 {
			return `{"type":"signature_delta","signature":"` + strings.Repeat("QUJD", 64) + `"}`
		}
		return `{"type":"thinking_delta","thinking":"weighing option ` + fmt.Sprint(k) + ` carefully. "}`
	})
	block(1, `{"type":"text","text":""}`, 80, func(k int) string {
		return `{"type":"text_delta","text":"word` + fmt.Sprint(k) + ` "}`
	})
	for c := range 2 {
		block(2+c, fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":"tool_01","input":{}}`, c), 21, func(k int) string {
			switch k {
			case 0:
				return `{"type":"input_json_delta","partial_json":"{\"path\":\""}`
			case 20:
				return `{"type":"input_json_delta","partial_json":"\"}"}`
			}
			return `{"type":"input_json_delta","partial_json":"seg/"}`
		})
	}
	for n < 198 {
		ev("ping", `{"type":"ping"}`)
		n++
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":400}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return s.Bytes()
}

func TestBenchStream(t *testing.T) {
	data := benchStream()
	if got := bytes.Count(data, []byte("\n\n")); got != 200 {
		t.Fatalf("%d events, want 200", got)
	}
	evs, err := collect(t, bytes.NewReader(data), true)
	if err != nil {
		t.Fatal(err)
	}
	msg := evs[len(evs)-1].Message
	if len(msg.Parts) != 4 || string(msg.Parts[2].Args) != `{"path":"`+strings.Repeat("seg/", 19)+`"}` {
		t.Fatalf("assembled message: %+v", msg.Parts)
	}
}

func BenchmarkDecodeStream(b *testing.B) {
	llmtest.BenchDecode(b, New(Options{}), benchStream(), true)
}
