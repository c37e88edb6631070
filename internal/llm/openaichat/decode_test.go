package openaichat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

var openRouter = Quirks{MaxTokensField: "max_tokens", ReasoningDetails: true}

// quirksFor is the provider each recorded exchange comes from.
func quirksFor(name string) Quirks {
	switch {
	case strings.HasPrefix(name, "openrouter"), strings.HasPrefix(name, "error_chunk"):
		return openRouter
	case strings.HasPrefix(name, "deepseek"), strings.HasPrefix(name, "moonshot"):
		return Quirks{MaxTokensField: "max_tokens", ReasoningContent: true}
	}
	return Quirks{}
}

func TestDecodeStream(t *testing.T) {
	llmtest.CheckRecorded(t, filepath.Join("testdata", "stream", "*.sse"), true, func(name string) llm.Dialect { return New(quirksFor(name)) }, *update)
}

func TestDecodeWhole(t *testing.T) {
	llmtest.CheckRecorded(t, filepath.Join("testdata", "whole", "*.json"), false, func(name string) llm.Dialect { return New(quirksFor(name)) }, *update)
}

func TestDecodeParallelCalls(t *testing.T) {
	in, err := os.ReadFile("testdata/stream/parallel_tools.sse")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := llmtest.Collect(t, New(Quirks{}).Decode(bytes.NewReader(in), true))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Event{
		{Kind: llm.EventToolCall, Index: 0, CallID: "call_paris", Name: "weather"},
		{Kind: llm.EventToolArgs, Index: 0, Text: `{"ci`},
		{Kind: llm.EventToolCall, Index: 1, CallID: "call_rome", Name: "weather"},
		{Kind: llm.EventToolArgs, Index: 0, Text: `ty": "Paris"}`},
		{Kind: llm.EventToolArgs, Index: 1, Text: `{"city":`},
		{Kind: llm.EventToolArgs, Index: 1, Text: ` "Rome"}`},
		{Kind: llm.EventDone, Finish: "tool_calls",
			Usage: &llm.Usage{InputTokens: 120, OutputTokens: 48, ReasoningTokens: 16, CacheReadTokens: 64, TotalTokens: 168},
			Message: &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Kind: llm.KindToolCall, CallID: "call_paris", Name: "weather", Args: json.RawMessage(`{"city": "Paris"}`)},
				{Kind: llm.KindToolCall, CallID: "call_rome", Name: "weather", Args: json.RawMessage(`{"city": "Rome"}`)},
			}}},
	}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestDecodeStopEarly(t *testing.T) {
	in, _ := os.ReadFile("testdata/stream/parallel_tools.sse")
	n := 0
	for _, err := range New(Quirks{}).Decode(bytes.NewReader(in), true) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("got %d events, want to stop at 2", n)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     io.Reader
		stream bool
		want   string
	}{
		{"empty stream", strings.NewReader(""), true, "ErrTruncated"},
		{"comments only", strings.NewReader(": ping\n\n: ping\n\n"), true, "ErrTruncated"},
		{"chunk not JSON", strings.NewReader("data: {nope\n\ndata: [DONE]\n\n"), true, "error: decode chunk: invalid character 'n' looking for beginning of object key string"},
		{"last chunk not JSON", strings.NewReader("data: {nope\n\n"), true, "ErrTruncated"},
		{"read error", io.MultiReader(strings.NewReader("data: {}\n\n"), iotest.ErrReader(errors.New("connection reset"))), true, "error: read stream: connection reset"},
		{"line past the cap", strings.NewReader("data: " + strings.Repeat("x", llm.MaxLine+1)), true, "ErrLineTooLong"},
		{"whole read error", iotest.ErrReader(errors.New("connection reset")), false, "error: read response: connection reset"},
		// MiniMax's status envelope in a 200: any code but 0 is the error, a string of digits too.
		{"minimax status", strings.NewReader(`{"choices":null,"base_resp":{"status_code":2013,"status_msg":"invalid params"}}`), false, `StreamError type="status_code 2013" message="invalid params" status=400`},
		{"minimax status as a string", strings.NewReader(`{"base_resp":{"status_code":"1004","status_msg":"login fail"}}`), false, `StreamError type="status_code 1004" message="login fail" status=401`},
		{"minimax status without a message", strings.NewReader(`{"base_resp":{"status_code":1000}}`), false, `StreamError type="status_code 1000" message="the request failed" status=503`},
		{"minimax status beside choices", strings.NewReader(`{"choices":[{"index":0,"message":{"content":"a"}}],"base_resp":{"status_code":1027,"status_msg":"output new_sensitive"}}`), false, `StreamError type="status_code 1027" message="output new_sensitive" status=400`},
		{"minimax status undocumented", strings.NewReader(`{"base_resp":{"status_code":1234,"status_msg":"odd"}}`), false, `StreamError type="status_code 1234" message="odd"`},
		{"minimax success, no choices", strings.NewReader(`{"choices":null,"base_resp":{"status_code":0,"status_msg":""}}`), false, "error: decode response: no choices"},
		{"no status code", strings.NewReader(`{"choices":null,"base_resp":{"status_code":{},"status_msg":"x"}}`), false, "error: decode response: no choices"},
		{"minimax status in a stream", strings.NewReader("data: {\"choices\":null,\"base_resp\":{\"status_code\":1002,\"status_msg\":\"rate limit\"}}\n\ndata: [DONE]\n\n"), true, `StreamError type="status_code 1002" message="rate limit" status=429`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llmtest.Collect(t, New(Quirks{}).Decode(tt.in, tt.stream))
			if err == nil {
				t.Fatal("no error")
			}
			if got := llmtest.ErrView(err); got != tt.want {
				t.Errorf("error %s, want %s", got, tt.want)
			}
		})
	}
}

// TestDecodeManyReasoningDetails: a stream may carry many reasoning_details, each piece finding
// its detail by index; a search through the details per piece made 60,000 of them (1 MB)
// take minutes. The deadline is only a hang guard.
func TestDecodeManyReasoningDetails(t *testing.T) {
	const n = 60000
	var b bytes.Buffer
	b.WriteString(`data: {"choices":[{"index":0,"delta":{"reasoning_details":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"reasoning.text","index":%d}`, i)
	}
	b.WriteString("]}}]}\n\n")
	// A second piece of the first and the last detail.
	fmt.Fprintf(&b, "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_details\":[{\"type\":\"reasoning.text\",\"index\":0,\"text\":\"first\"},{\"type\":\"reasoning.text\",\"index\":%d,\"text\":\"last\"}]}}]}\n\ndata: [DONE]\n\n", n-1)
	done := make(chan []llm.Event, 1)
	go func() {
		var evs []llm.Event
		for ev, err := range New(openRouter).Decode(&b, true) {
			if err != nil {
				t.Error(err)
				break
			}
			evs = append(evs, ev)
		}
		done <- evs
	}()
	var evs []llm.Event
	select {
	case evs = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("decoding did not end")
	}
	if len(evs) == 0 || evs[len(evs)-1].Kind != llm.EventDone {
		t.Fatalf("no EventDone in %d events", len(evs))
	}
	parts := evs[len(evs)-1].Message.Parts
	if len(parts) != 1 || parts[0].Text != "firstlast" {
		t.Fatalf("%d parts, want one reasoning part with text firstlast", len(parts))
	}
	var got []map[string]any
	if err := json.Unmarshal(parts[0].Raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != n || got[0]["text"] != "first" || got[n-1]["text"] != "last" {
		t.Errorf("%d details, first %v, last %v", len(got), got[0], got[len(got)-1])
	}
}

// TestEmptyToolCallDeltas: a tool call delta that never names a call nor gives it arguments
// (null, or a stray index) is no call: it was one with no name, which the loop ran as an
// unknown tool and every later request sent back, and which turned a "stop" into "tool_calls".
func TestEmptyToolCallDeltas(t *testing.T) {
	const call = `{"index":0,"id":"call_1","type":"function","function":{"name":"weather","arguments":"{}"}}`
	for _, c := range []struct {
		name, deltas string
		want         []llm.Part
		finish       string
	}{
		{"null", `[null]`, []llm.Part{{Kind: llm.KindText, Text: "hi"}}, "stop"},
		{"a stray index", `[{"index":3,"type":"function"}]`, []llm.Part{{Kind: llm.KindText, Text: "hi"}}, "stop"},
		{"beside a call", `[` + call + `,{"index":1,"function":{"arguments":""}}]`, []llm.Part{
			{Kind: llm.KindText, Text: "hi"},
			{Kind: llm.KindToolCall, CallID: "call_1", Name: "weather", Args: json.RawMessage(`{}`)},
		}, "tool_calls"},
		{"arguments without a name are kept", `[{"index":0,"function":{"arguments":"{\"a\":1}"}}]`, []llm.Part{
			{Kind: llm.KindText, Text: "hi"},
			{Kind: llm.KindToolCall, CallID: "call_0", Args: json.RawMessage(`{"a":1}`)},
		}, "tool_calls"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := `data: {"choices":[{"index":0,"delta":{"content":"hi","tool_calls":` + c.deltas + `}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
			evs, err := llmtest.Collect(t, New(Quirks{}).Decode(strings.NewReader(in), true))
			if err != nil {
				t.Fatal(err)
			}
			done := evs[len(evs)-1]
			if diff := cmp.Diff(c.want, done.Message.Parts); diff != "" || done.Finish != c.finish {
				t.Errorf("finish %q, want %q; parts (-want +got):\n%s", done.Finish, c.finish, diff)
			}
		})
	}
}

// TestWholeToolCallsAreEachACall: in a whole completion each tool_calls element is one call,
// with or without an id or an index; read as stream deltas, two calls without ids became one
// call of the first name with both arguments run together.
func TestWholeToolCallsAreEachACall(t *testing.T) {
	want := []llm.Part{
		{Kind: llm.KindToolCall, CallID: "call_0", Name: "a", Args: json.RawMessage(`{"x":1}`)},
		{Kind: llm.KindToolCall, CallID: "call_1", Name: "b", Args: json.RawMessage(`{}`)},
	}
	for _, extra := range []string{``, `"index":0,`} {
		in := `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
			`{` + extra + `"type":"function","function":{"name":"a","arguments":"{\"x\":1}"}},` +
			`{` + extra + `"type":"function","function":{"name":"b","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`
		evs, err := llmtest.Collect(t, New(Quirks{}).Decode(strings.NewReader(in), false))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, evs[len(evs)-1].Message.Parts); diff != "" {
			t.Errorf("%q: parts (-want +got):\n%s", extra, diff)
		}
	}
}

// TestTooManyToolCalls: every index a stream names costs a call's bookkeeping, many times the
// bytes naming it; a response past the bound on calls ends with an error instead of growing
// gigabytes of calls within the response's byte bound.
func TestTooManyToolCalls(t *testing.T) {
	calls := func(n int, each string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, each, i)
		}
		return b.String()
	}
	const want = "error: decode response: more than 16384 tool calls"
	for _, c := range []struct {
		name, in string
		stream   bool
		want     string
	}{
		{"stream", `data: {"choices":[{"index":0,"delta":{"tool_calls":[` + calls(maxCalls+1, `{"index":%d}`) + `]}}]}` + "\n\ndata: [DONE]\n\n", true, want},
		{"whole", `{"choices":[{"index":0,"message":{"tool_calls":[` + calls(maxCalls+1, `{"id":"c%d","function":{"name":"f","arguments":"{}"}}`) + `]}}]}`, false, want},
		{"at the bound", `data: {"choices":[{"index":0,"delta":{"tool_calls":[` + calls(maxCalls, `{"index":%d,"function":{"name":"f"}}`) + `]}}]}` + "\n\ndata: [DONE]\n\n", true, "ok"},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs, err := llmtest.Collect(t, New(Quirks{}).Decode(strings.NewReader(c.in), c.stream))
			got := "ok"
			if err != nil {
				got = llmtest.ErrView(err)
			} else if n := len(evs[len(evs)-1].Message.Parts); n != maxCalls {
				t.Errorf("%d calls, want %d", n, maxCalls)
			}
			if got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}
