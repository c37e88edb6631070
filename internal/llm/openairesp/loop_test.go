package openairesp

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

// step2 decodes step 1's response, answers its tool calls, and encodes the next request's input.
func step2(t *testing.T, resp []byte, stream bool) []json.RawMessage {
	t.Helper()
	d := New()
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
		results.Parts = append(results.Parts, llm.Part{Kind: llm.KindToolResult, CallID: c.CallID, Text: "result of " + c.Name})
	}
	req := llm.Request{Model: "gpt-5.5", Stream: true, Tools: tools(), Messages: []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "Weather in Paris?"}}},
		back,
		results,
	}}
	enc, err := d.Encode(&req, llm.Patch{Body: json.RawMessage(`{"store":false,"include":["reasoning.encrypted_content"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(enc.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Input
}

// doneItem returns the raw item of the output_item.done event at output index i in an SSE body.
func doneItem(t *testing.T, sse []byte, i int) []byte {
	t.Helper()
	for _, line := range strings.Split(string(sse), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type        string          `json:"type"`
			OutputIndex int             `json:"output_index"`
			Item        json.RawMessage `json:"item"`
		}
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == "response.output_item.done" && ev.OutputIndex == i {
			if !strings.Contains(data, string(ev.Item)) {
				t.Fatal("test setup: item bytes not found in the event")
			}
			return ev.Item
		}
	}
	t.Fatalf("no output_item.done for output %d", i)
	return nil
}

func TestToolLoopStream(t *testing.T) {
	resp, err := os.ReadFile("testdata/stream/reasoning_tool.sse")
	if err != nil {
		t.Fatal(err)
	}
	input := step2(t, resp, true)
	// user, reasoning, function_call, function_call_output
	if len(input) != 4 {
		t.Fatalf("input has %d items: %s", len(input), input)
	}
	if want := doneItem(t, resp, 0); !bytes.Equal(input[1], want) {
		t.Errorf("reasoning item sent back as\n%s\nwant, byte for byte,\n%s", input[1], want)
	}
	want := []string{
		`{"type":"function_call","id":"fc_02b","call_id":"call_Pa1","name":"weather","arguments":"{\"city\":\"Paris\"}"}`,
		`{"type":"function_call_output","call_id":"call_Pa1","output":"result of weather"}`,
	}
	if diff := cmp.Diff(want, []string{string(input[2]), string(input[3])}); diff != "" {
		t.Errorf("items after the reasoning (-want +got):\n%s", diff)
	}
}

func TestToolLoopWhole(t *testing.T) {
	resp, err := os.ReadFile("testdata/whole/reasoning_tool.json")
	if err != nil {
		t.Fatal(err)
	}
	input := step2(t, resp, false)
	var doc struct {
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(resp, &doc); err != nil {
		t.Fatal(err)
	}
	if len(input) != 5 {
		t.Fatalf("input has %d items: %s", len(input), input)
	}
	if !bytes.Equal(input[1], doc.Output[0]) || !bytes.Contains(resp, doc.Output[0]) {
		t.Errorf("reasoning item sent back as\n%s\nwant, byte for byte,\n%s", input[1], doc.Output[0])
	}
	want := []string{
		`{"type":"message","id":"msg_w1","role":"assistant","status":"completed","phase":"commentary","content":[{"type":"output_text","text":"Let me check.","annotations":[]}]}`,
		`{"type":"function_call","id":"fc_w1","call_id":"call_W1","name":"weather","arguments":"{\"city\":\"Paris\"}"}`,
		`{"type":"function_call_output","call_id":"call_W1","output":"result of weather"}`,
	}
	var got []string
	for _, it := range input[2:] {
		got = append(got, string(it))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("items after the reasoning (-want +got):\n%s", diff)
	}
}

// streamOf builds a Responses stream of n events: reasoning summary, text and two calls.
func streamOf(n int) []byte {
	var b bytes.Buffer
	ev := func(typ, rest string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, b.Len(), rest)
	}
	ev("response.created", `"response":{"id":"resp_B","object":"response","status":"in_progress","output":[]}`)
	ev("response.output_item.added", `"output_index":0,"item":{"id":"rs_B","type":"reasoning","summary":[]}`)
	deltas := n - 12
	for i := range deltas / 4 {
		ev("response.reasoning_summary_text.delta", fmt.Sprintf(`"item_id":"rs_B","output_index":0,"summary_index":0,"delta":"thought %d "`, i))
	}
	ev("response.output_item.done", `"output_index":0,"item":{"id":"rs_B","type":"reasoning","encrypted_content":"gAAAA==","summary":[{"type":"summary_text","text":"thoughts"}]}`)
	ev("response.output_item.added", `"output_index":1,"item":{"id":"msg_B","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	for i := range deltas - deltas/4 {
		ev("response.output_text.delta", fmt.Sprintf(`"item_id":"msg_B","output_index":1,"content_index":0,"delta":"word %d "`, i))
	}
	ev("response.output_item.done", `"output_index":1,"item":{"id":"msg_B","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"words"}],"role":"assistant"}`)
	ev("response.output_item.added", `"output_index":2,"item":{"id":"fc_B1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"weather"}`)
	ev("response.function_call_arguments.delta", `"item_id":"fc_B1","output_index":2,"delta":"{\"city\":\"Paris\"}"`)
	ev("response.output_item.done", `"output_index":2,"item":{"id":"fc_B1","type":"function_call","status":"completed","arguments":"{\"city\":\"Paris\"}","call_id":"call_1","name":"weather"}`)
	ev("response.output_item.added", `"output_index":3,"item":{"id":"fc_B2","type":"function_call","status":"in_progress","arguments":"","call_id":"call_2","name":"clock"}`)
	ev("response.function_call_arguments.delta", `"item_id":"fc_B2","output_index":3,"delta":"{}"`)
	ev("response.output_item.done", `"output_index":3,"item":{"id":"fc_B2","type":"function_call","status":"completed","arguments":"{}","call_id":"call_2","name":"clock"}`)
	ev("response.completed", `"response":{"id":"resp_B","object":"response","status":"completed","output":[],"usage":{"input_tokens":1000,"output_tokens":200,"total_tokens":1200}}`)
	return b.Bytes()
}

func BenchmarkDecodeStream(b *testing.B) {
	in := streamOf(200)
	if n := strings.Count(string(in), "data: {"); n != 200 {
		b.Fatalf("%d events", n)
	}
	done := llmtest.BenchDecode(b, New(), in, true)
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
				{Kind: llm.KindReasoning, Text: "thinking", Raw: json.RawMessage(fmt.Sprintf(`{"id":"rs_%d","type":"reasoning","encrypted_content":"%s","summary":[{"type":"summary_text","text":"thinking about the next step"}]}`, i, strings.Repeat("A", 800))), Dialect: Name},
				{Kind: llm.KindText, Text: "Let me check.", Meta: json.RawMessage(fmt.Sprintf(`{"id":"msg_%d","phase":"commentary"}`, i)), Dialect: Name},
				{Kind: llm.KindToolCall, CallID: id, Name: "tool_01", Args: json.RawMessage(`{"path":"/src/main.go","limit":100}`), Meta: json.RawMessage(fmt.Sprintf(`{"id":"fc_%d"}`, i)), Dialect: Name},
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
	patch := llm.Patch{Body: json.RawMessage(`{"reasoning":{"effort":"high","summary":"auto"},"include":["reasoning.encrypted_content"],"store":false}`)}
	for _, bc := range []struct {
		name  string
		patch llm.Patch
	}{{"plain", llm.Patch{}}, {"patched", patch}} {
		b.Run(bc.name, func(b *testing.B) { llmtest.BenchEncode(b, New(), req, bc.patch) })
	}
}
