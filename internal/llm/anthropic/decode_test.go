package anthropic

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// collect decodes r, holding the sequence to the Dialect contract.
func collect(t *testing.T, r io.Reader, stream bool) ([]llm.Event, error) {
	t.Helper()
	return llmtest.Collect(t, New(Options{}).Decode(r, stream))
}

func openTestdata(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func text(s string) llm.Event      { return llm.Event{Kind: llm.EventText, Text: s} }
func reasoning(s string) llm.Event { return llm.Event{Kind: llm.EventReasoning, Text: s} }
func call(i int, id, name string) llm.Event {
	return llm.Event{Kind: llm.EventToolCall, Index: i, CallID: id, Name: name}
}
func argsDelta(i int, s string) llm.Event {
	return llm.Event{Kind: llm.EventToolArgs, Index: i, Text: s}
}

func done(finish string, u *llm.Usage, parts ...llm.Part) llm.Event {
	return llm.Event{Kind: llm.EventDone, Finish: finish, Usage: u,
		Message: &llm.Message{Role: llm.RoleAssistant, Parts: parts}}
}

func textPart(s string) llm.Part { return llm.Part{Kind: llm.KindText, Text: s} }
func thinkingPart(text, raw string) llm.Part {
	return llm.Part{Kind: llm.KindReasoning, Text: text, Dialect: Name, Raw: json.RawMessage(raw)}
}
func callPart(id, name, args string) llm.Part {
	return llm.Part{Kind: llm.KindToolCall, CallID: id, Name: name, Args: json.RawMessage(args)}
}

func TestDecodeStream(t *testing.T) {
	tests := []struct {
		file    string
		want    []llm.Event
		wantErr error // a sentinel, or a *llm.StreamError compared by value
	}{
		{
			file: "text.sse",
			want: []llm.Event{
				text("Hello"),
				text(`, <world> & "friends"`),
				done("stop", &llm.Usage{InputTokens: 25, OutputTokens: 15},
					textPart(`Hello, <world> & "friends"`)),
			},
		},
		{
			file: "thinking.sse",
			want: []llm.Event{
				reasoning("Let me work out 27 * 453.\n"),
				reasoning("27 * 453 = 12231."),
				text("27 * 453 = 12,231"),
				done("stop", &llm.Usage{InputTokens: 40, OutputTokens: 88},
					thinkingPart("Let me work out 27 * 453.\n27 * 453 = 12231.",
						`{"type":"thinking","thinking":"Let me work out 27 * 453.\n27 * 453 = 12231.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/Q=="}`),
					textPart("27 * 453 = 12,231")),
			},
		},
		{
			file: "interleaved.sse",
			want: []llm.Event{
				reasoning("I need the weather first."),
				call(0, "toolu_01A", "get_weather"),
				argsDelta(0, `{"city": "Par`),
				argsDelta(0, `is", "unit": "c"}`),
				reasoning("And the time there."),
				call(1, "toolu_01B", "get_time"),
				argsDelta(1, `{"tz":`),
				argsDelta(1, `"Europe/Paris"}`),
				call(2, "toolu_01C", "list_alerts"),
				done("tool_calls", &llm.Usage{InputTokens: 512, OutputTokens: 161},
					thinkingPart("I need the weather first.", `{"type":"thinking","thinking":"I need the weather first.","signature":"sig-one"}`),
					thinkingPart("", `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}`),
					callPart("toolu_01A", "get_weather", `{"city": "Paris", "unit": "c"}`),
					thinkingPart("And the time there.", `{"type":"thinking","thinking":"And the time there.","signature":"sig-two"}`),
					callPart("toolu_01B", "get_time", `{"tz":"Europe/Paris"}`),
					callPart("toolu_01C", "list_alerts", `{}`)),
			},
		},
		{
			file: "usage.sse",
			want: []llm.Event{
				text("Cut short"),
				done("length", &llm.Usage{InputTokens: 6 + 120 + 41203, OutputTokens: 21, CacheReadTokens: 41203},
					textPart("Cut short")),
			},
		},
		{
			file:    "error.sse",
			want:    []llm.Event{text("Partial")},
			wantErr: &llm.StreamError{Type: "overloaded_error", Message: "Overloaded"},
		},
		{
			file: "cut.sse",
			want: []llm.Event{
				call(0, "toolu_01X", "search"),
				argsDelta(0, `{"query": "go ite`),
			},
			wantErr: llm.ErrTruncated,
		},
		{
			// Comments, CRLF, ping, server tool blocks, citations and an event type from the
			// future: none of them is an error, and none leaks into the message.
			file: "unknown.sse",
			want: []llm.Event{
				text("Found it."),
				done("pause_turn", &llm.Usage{InputTokens: 30, OutputTokens: 12}, textPart("Found it.")),
			},
		},
		{
			// Thinking given whole at content_block_start, reasoning_content in a delta, and an
			// empty text delta.
			file: "minimax.sse",
			want: []llm.Event{
				reasoning("The user greets me."),
				reasoning("Reply briefly."),
				text("Hi there!"),
				done("stop", &llm.Usage{InputTokens: 52, OutputTokens: 17},
					thinkingPart("The user greets me.", `{"type":"thinking","thinking":"The user greets me.","signature":"a1b2c3"}`),
					llm.Part{Kind: llm.KindReasoning, Text: "Reply briefly.", Dialect: Name},
					textPart("Hi there!")),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := collect(t, openTestdata(t, tt.file), true)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			llmtest.CheckErr(t, err, tt.wantErr)
		})
	}
}

func TestDecodeStreamMalformed(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []llm.Event
		wantErr error
	}{
		{name: "empty", in: "", wantErr: llm.ErrTruncated},
		{name: "only ping", in: "event: ping\ndata: {\"type\":\"ping\"}\n\n", wantErr: llm.ErrTruncated},
		{
			name:    "error without details",
			in:      "event: error\ndata: {\"type\":\"error\"}\n\n",
			wantErr: &llm.StreamError{Message: "error without details"},
		},
		{
			// The event field names the type when the data does not.
			name: "type from the event field",
			in: "event: content_block_delta\ndata: {\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n" +
				"event: message_stop\ndata: {}\n\n",
			want: []llm.Event{text("x"), done("", nil, textPart("x"))},
		},
		{
			// OpenAI's terminator from a proxy is no event, and no message_stop either.
			name:    "done marker",
			in:      "data: [DONE]\n\n",
			wantErr: llm.ErrTruncated,
		},
		{
			name: "tool input only at block start",
			in: `data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{"a":1}}}` + "\n\n" +
				`data: {"type":"message_stop"}` + "\n\n",
			want: []llm.Event{call(0, "t1", "f"), done("", nil, callPart("t1", "f", `{"a":1}`))},
		},
		{
			// A stream cut inside a tool call that still ends: the arguments stay as text.
			name: "invalid arguments",
			in: `data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}` + "\n\n" +
				`data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}` + "\n\n" +
				`data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"}}` + "\n\n" +
				`data: {"type":"message_stop"}` + "\n\n",
			want: []llm.Event{call(0, "t1", "f"), argsDelta(0, `{"a":`), done("length", nil, callPart("t1", "f", `"{\"a\":"`))},
		},
		{
			name:    "data not JSON",
			in:      "event: message_start\ndata: {oops\n\n",
			wantErr: errSyntax,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collect(t, strings.NewReader(tt.in), true)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tt.wantErr == errSyntax {
				var se *json.SyntaxError
				if !errors.As(err, &se) {
					t.Errorf("error = %v, want a JSON syntax error", err)
				}
				return
			}
			llmtest.CheckErr(t, err, tt.wantErr)
		})
	}
}

var errSyntax = errors.New("syntax")

func TestDecodeStreamLineTooLong(t *testing.T) {
	in := "data: " + strings.Repeat("x", llm.MaxLine+1) + "\n\n"
	_, err := collect(t, strings.NewReader(in), true)
	if !errors.Is(err, llm.ErrLineTooLong) {
		t.Fatalf("error = %v, want ErrLineTooLong", err)
	}
}

// A caller may stop ranging at any event.
func TestDecodeStreamStopEarly(t *testing.T) {
	for n := range 9 {
		seen := 0
		for range New(Options{}).Decode(openTestdata(t, "interleaved.sse"), true) {
			seen++
			if seen > n {
				break
			}
		}
		if seen != n+1 {
			t.Fatalf("stopped after %d events, want %d", seen, n+1)
		}
	}
}

func TestDecodeDocument(t *testing.T) {
	got, err := collect(t, openTestdata(t, "response.json"), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Event{done("tool_calls", &llm.Usage{InputTokens: 472 + 1024, OutputTokens: 120, CacheReadTokens: 1024},
		// Thinking blocks are kept as they came, compacted: the signature covers their content.
		thinkingPart("Check <both> cities & compare.",
			`{"type":"thinking","thinking":"Check <both> cities & compare.","signature":"WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL"}`),
		thinkingPart("", `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}`),
		textPart("Let me look both up."),
		callPart("toolu_01P", "get_weather", `{"city": "Paris"}`),
		callPart("toolu_01L", "get_weather", `{"city": "London"}`),
	)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestDecodeDocumentErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []llm.Event
		wantErr error
	}{
		{name: "empty", in: " \n", wantErr: llm.ErrTruncated},
		{name: "cut", in: `{"type":"message","content":[{"type":"text","text":"hal`, wantErr: llm.ErrTruncated},
		{
			name:    "error body",
			in:      `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}`,
			wantErr: &llm.StreamError{Type: "invalid_request_error", Message: "max_tokens: must be positive"},
		},
		{
			name: "end_turn, null input, unknown block",
			in: `{"type":"message","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}},` +
				`{"type":"tool_use","id":"t","name":"f","input":null},{"type":"text","text":""}],"stop_reason":"end_turn"}`,
			want: []llm.Event{done("stop", nil, callPart("t", "f", `{}`))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collect(t, strings.NewReader(tt.in), false)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			llmtest.CheckErr(t, err, tt.wantErr)
		})
	}
}

func TestFinish(t *testing.T) {
	for stop, want := range map[string]string{
		"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
		"refusal": "content_filter", "pause_turn": "pause_turn",
		"model_context_window_exceeded": "model_context_window_exceeded", "": "",
	} {
		if got := finish(stop); got != want {
			t.Errorf("finish(%q) = %q, want %q", stop, got, want)
		}
	}
}
