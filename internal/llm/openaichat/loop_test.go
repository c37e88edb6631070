package openaichat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// sentAssistant is what step 2's body carries of the assistant turn step 1 produced.
type sentAssistant struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	ReasoningDetails json.RawMessage `json:"reasoning_details"`
	ToolCalls        []toolCall      `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
}

// step2 decodes step 1's response, answers its tool calls, and encodes the next request.
func step2(t *testing.T, q Quirks, resp []byte, stream bool) (*llm.Message, []sentAssistant) {
	t.Helper()
	d := New(q)
	evs, err := llmtest.Collect(t, d.Decode(bytes.NewReader(resp), stream))
	if err != nil {
		t.Fatal(err)
	}
	msg := evs[len(evs)-1].Message
	calls := msg.ToolCalls()
	if len(calls) == 0 {
		t.Fatal("step 1 made no tool call")
	}
	// The session store keeps the message as JSON; step 2 reads it back from there.
	back := llmtest.Reload(t, msg)
	results := llm.Message{Role: llm.RoleTool}
	for _, c := range calls {
		results.Parts = append(results.Parts, llm.Part{Kind: llm.KindToolResult, CallID: c.CallID, Name: c.Name, Text: "result of " + c.Name})
	}
	req := llm.Request{Model: "m", Stream: true, Tools: tools(), Messages: []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "question"}}},
		back,
		results,
	}}
	enc, err := d.Encode(&req, llm.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []sentAssistant `json:"messages"`
	}
	if err := json.Unmarshal(enc.Body, &body); err != nil {
		t.Fatal(err)
	}
	// The tool results answer the calls by id, in order.
	for i, c := range calls {
		if got := body.Messages[2+i]; got.Role != "tool" || got.ToolCallID != c.CallID {
			t.Errorf("message %d = %+v, want the result of %s", 2+i, got, c.CallID)
		}
		// Stored as JSON, an object's spacing is compacted; the arguments are the same.
		if got := body.Messages[1].ToolCalls[i]; got.ID != c.CallID || compact(got.Function.Arguments) != compact(llm.ArgsText(c.Args)) {
			t.Errorf("call %d sent back as %+v, want %s %s", i, got, c.CallID, c.Args)
		}
	}
	return msg, body.Messages
}

func TestToolLoopDeepSeek(t *testing.T) {
	resp, err := os.ReadFile("testdata/stream/deepseek_reasoning.sse")
	if err != nil {
		t.Fatal(err)
	}
	_, sent := step2(t, Quirks{MaxTokensField: "max_tokens", ReasoningContent: true}, resp, true)
	// reasoning_content is the streamed deltas, concatenated, exactly.
	if got, want := string(sent[1].ReasoningContent), `"The user asks 2+2. I should use calc."`; got != want {
		t.Errorf("reasoning_content = %s, want %s", got, want)
	}
	if got := string(sent[1].Content); got != `"Let me compute."` {
		t.Errorf("content = %s", got)
	}
	if sent[1].ReasoningDetails != nil {
		t.Errorf("reasoning_details sent to DeepSeek: %s", sent[1].ReasoningDetails)
	}
}

func TestToolLoopOpenRouterStream(t *testing.T) {
	resp, err := os.ReadFile("testdata/stream/openrouter_details.sse")
	if err != nil {
		t.Fatal(err)
	}
	_, sent := step2(t, openRouter, resp, true)
	// The streamed pieces of each detail, merged: text joined, the signature that came last
	// kept, the encrypted detail whole.
	want := `[{"type":"reasoning.text","text":"Need the weather tool.","format":"anthropic-claude-v1","index":0,"signature":"EqQBCkgIBxABGAIiQL"},{"type":"reasoning.encrypted","data":"c2VjcmV0","format":"anthropic-claude-v1","index":1}]`
	if diff := cmp.Diff(want, string(sent[1].ReasoningDetails)); diff != "" {
		t.Errorf("reasoning_details (-want +got):\n%s", diff)
	}
	if sent[1].ReasoningContent != nil {
		t.Errorf("reasoning_content sent to OpenRouter: %s", sent[1].ReasoningContent)
	}
}

func TestToolLoopOpenRouterWhole(t *testing.T) {
	resp, err := os.ReadFile("testdata/whole/openrouter.json")
	if err != nil {
		t.Fatal(err)
	}
	_, sent := step2(t, openRouter, resp, false)
	// Byte for byte the array the response held.
	var doc struct {
		Choices []struct {
			Message struct {
				ReasoningDetails json.RawMessage `json:"reasoning_details"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(resp, &doc); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	_ = json.Compact(&want, doc.Choices[0].Message.ReasoningDetails)
	if got := sent[1].ReasoningDetails; !bytes.Equal(got, want.Bytes()) {
		t.Errorf("reasoning_details = %s\nwant %s", got, want.Bytes())
	}
	if !bytes.Contains(resp, doc.Choices[0].Message.ReasoningDetails) {
		t.Fatal("test setup: raw array not found in the response")
	}
}

func TestToolLoopModelSwitch(t *testing.T) {
	// Reasoning OpenRouter produced is not sent to a provider without its quirk.
	resp, _ := os.ReadFile("testdata/stream/openrouter_details.sse")
	msg, _ := step2(t, openRouter, resp, true)
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "q"}}}, *msg}}
	enc, err := New(Quirks{}).Encode(&req, llm.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(enc.Body, []byte("reasoning")) {
		t.Errorf("reasoning sent to OpenAI: %s", enc.Body)
	}
}

// streamOf builds a Chat Completions stream of n chunks: reasoning, text and two tool calls.
func streamOf(n int) []byte {
	var b bytes.Buffer
	chunk := func(delta string) {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-B\",\"object\":\"chat.completion.chunk\",\"created\":1760000000,\"model\":\"gpt-5.5\",\"choices\":[{\"index\":0,\"delta\":%s,\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", delta)
	}
	chunk(`{"role":"assistant","content":""}`)
	for i := range n - 8 {
		switch {
		case i < (n-8)/4:
			chunk(fmt.Sprintf(`{"reasoning_content":"thought %d "}`, i))
		default:
			chunk(fmt.Sprintf(`{"content":"word %d "}`, i))
		}
	}
	chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"weather","arguments":""}}]}`)
	chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`)
	chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`)
	chunk(`{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"clock","arguments":""}}]}`)
	chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}`)
	b.WriteString(`data: {"id":"chatcmpl-B","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-B","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func BenchmarkDecodeStream(b *testing.B) {
	in := streamOf(200)
	if n := strings.Count(string(in), "data: {"); n != 200 {
		b.Fatalf("%d chunks", n)
	}
	done := llmtest.BenchDecode(b, New(Quirks{ReasoningContent: true}), in, true)
	if len(done.Message.ToolCalls()) != 2 {
		b.Fatal("calls lost")
	}
}

// benchRequest is 10 messages (a tool loop of four steps) and 20 tools.
func benchRequest() *llm.Request {
	req := &llm.Request{Model: "gpt-5.5", System: strings.Repeat("You are a helpful agent. ", 40), Stream: true, MaxTokens: 4096}
	for i := range 20 {
		req.Tools = append(req.Tools, llm.Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			Description: "Does one thing well, with a description long enough to look like a real one.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"A path"},"limit":{"type":"integer","minimum":1},"flags":{"type":"array","items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`),
		})
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: strings.Repeat("Please look into this. ", 20)}}})
	for i := range 4 {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Kind: llm.KindReasoning, Text: "thinking", Raw: json.RawMessage(`"thinking about the next step"`), Dialect: Name},
				{Kind: llm.KindText, Text: "Let me check."},
				{Kind: llm.KindToolCall, CallID: id, Name: "tool_01", Args: json.RawMessage(`{"path":"/src/main.go","limit":100}`)},
			}},
			llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: id, Text: strings.Repeat("line of tool output\n", 50)}}},
		)
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindText, Text: "Done."}}})
	return req
}

func BenchmarkEncode(b *testing.B) {
	req := benchRequest()
	if len(req.Messages) != 10 || len(req.Tools) != 20 {
		b.Fatal("request shape")
	}
	patch := llm.Patch{Body: json.RawMessage(`{"reasoning_effort":"high","service_tier":"priority"}`)}
	for _, bc := range []struct {
		name  string
		q     Quirks
		patch llm.Patch
	}{
		{"plain", Quirks{}, llm.Patch{}},
		{"patched", Quirks{ReasoningContent: true}, patch},
	} {
		b.Run(bc.name, func(b *testing.B) { llmtest.BenchEncode(b, New(bc.q), req, bc.patch) })
	}
}

// BenchmarkEncodeLongSession is the encode of a session 200 messages long (tool rounds of 2 KB
// outputs) without tools: the check the turn loop makes of new input before storing it
// (agent.RequestChecker) costs one of these per turn.
func BenchmarkEncodeLongSession(b *testing.B) {
	short := benchRequest()
	req := &llm.Request{Model: short.Model, System: short.System, Stream: true}
	for len(req.Messages) < 200 {
		req.Messages = append(req.Messages, short.Messages[1:9]...)
	}
	req.Messages = append([]llm.Message{short.Messages[0]}, req.Messages[:199]...)
	llmtest.BenchEncode(b, New(Quirks{}), req, llm.Patch{})
}

func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}
