package gemini

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// decodeFile decodes testdata/name, holding the sequence to the Dialect contract.
func decodeFile(t *testing.T, name string, stream bool) ([]llm.Event, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return llmtest.Collect(t, New().Decode(f, stream))
}

func metaJSON(sig, id string) json.RawMessage {
	b, _ := json.Marshal(meta{ThoughtSignature: sig, ID: id})
	return b
}

const thinkingSig = "Q2lBQkFRSURCQVVHQndnSkNnc01EUTRQRUJFU0V4UVZGaGNZR1JvYkhCMGVIeUFoSWlNa0pTWW5LQ2txS3l3dExpOHdNVEl6TkRVMk56ZzVPanM4UFQ0L1FFRkNRMFJGUmtkSVNVcExURTFPVDFCUlVsTlVWVlpYV0ZsYVcxeGRYbDlnWVdKalpHVm1aMmhwYW10c2JXNXZjSEZ5YzNSMWRuZDRlWHA3ZkgxK2Z3PT0="

func TestDecodeRecorded(t *testing.T) {
	done := func(finish string, u *llm.Usage, parts ...llm.Part) llm.Event {
		if parts == nil {
			parts = []llm.Part{}
		}
		return llm.Event{Kind: llm.EventDone, Message: &llm.Message{Role: llm.RoleAssistant, Parts: parts}, Usage: u, Finish: finish}
	}
	text := func(s string) llm.Event { return llm.Event{Kind: llm.EventText, Text: s} }
	reasoning := func(s string) llm.Event { return llm.Event{Kind: llm.EventReasoning, Text: s} }
	tests := []struct {
		file    string
		stream  bool
		want    []llm.Event
		wantErr error // matched with errors.Is, or by type for *llm.StreamError
	}{
		{
			file: "text.sse", stream: true,
			want: []llm.Event{
				text("Hello"), text(", world."),
				done("stop", &llm.Usage{InputTokens: 9, OutputTokens: 4, TotalTokens: 13},
					llm.Part{Kind: llm.KindText, Text: "Hello, world."}),
			},
		},
		{
			file: "thinking.sse", stream: true,
			want: []llm.Event{
				reasoning("**Adding numbers**\n\nTwo plus two"), reasoning(" is four."),
				text("The answer"), text(" is 4."),
				done("stop", &llm.Usage{InputTokens: 12, OutputTokens: 39, ReasoningTokens: 34, CacheReadTokens: 8, TotalTokens: 51},
					llm.Part{Kind: llm.KindReasoning, Text: "**Adding numbers**\n\nTwo plus two is four.", Dialect: Name},
					// A signed piece stays its own part; unsigned pieces after it join.
					llm.Part{Kind: llm.KindText, Text: "The answer", Dialect: Name, Meta: metaJSON(thinkingSig, "")},
					llm.Part{Kind: llm.KindText, Text: " is 4."},
					llm.Part{Kind: llm.KindText, Text: "", Dialect: Name, Meta: metaJSON("RU5EX1NJRw==", "")}),
			},
		},
		{
			file: "tools.sse", stream: true,
			want: []llm.Event{
				reasoning("I should look up both cities."),
				{Kind: llm.EventToolCall, Index: 0, CallID: "call_0", Name: "get_weather"},
				{Kind: llm.EventToolArgs, Index: 0, Text: `{"city":"Paris"}`},
				{Kind: llm.EventToolCall, Index: 1, CallID: "call_1", Name: "get_weather"},
				{Kind: llm.EventToolArgs, Index: 1, Text: `{"city":"Berlin","unit":"celsius"}`},
				done("tool_calls", &llm.Usage{InputTokens: 80, OutputTokens: 60, ReasoningTokens: 38, TotalTokens: 140},
					llm.Part{Kind: llm.KindReasoning, Text: "I should look up both cities.", Dialect: Name},
					llm.Part{Kind: llm.KindToolCall, CallID: "call_0", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`),
						Dialect: Name, Meta: metaJSON("RlVOQ19TSUdfQQ==", "")},
					llm.Part{Kind: llm.KindToolCall, CallID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Berlin","unit":"celsius"}`)}),
			},
		},
		{
			file: "nonstream.json", stream: false,
			want: []llm.Event{
				reasoning("I need to check the weather for Paris."),
				text("Let me check."),
				{Kind: llm.EventToolCall, Index: 0, CallID: "fc-7f3a", Name: "get_weather"},
				{Kind: llm.EventToolArgs, Index: 0, Text: `{"city": "Paris"}`},
				done("tool_calls", &llm.Usage{InputTokens: 12, OutputTokens: 19, ReasoningTokens: 4, TotalTokens: 31},
					llm.Part{Kind: llm.KindReasoning, Text: "I need to check the weather for Paris.", Dialect: Name, Meta: metaJSON("VEhPVUdIVF9TSUdfQQ==", "")},
					llm.Part{Kind: llm.KindText, Text: "Let me check."},
					llm.Part{Kind: llm.KindToolCall, CallID: "fc-7f3a", Name: "get_weather", Args: json.RawMessage(`{"city": "Paris"}`),
						Dialect: Name, Meta: metaJSON("RlVOQ19DQUxMX1NJR19B", "fc-7f3a")}),
			},
		},
		{
			file: "unknown.sse", stream: true,
			want: []llm.Event{
				text("Known"), text(" text."),
				done("stop", &llm.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5},
					llm.Part{Kind: llm.KindText, Text: "Known text."}),
			},
		},
		{
			file: "blocked.sse", stream: true,
			want: []llm.Event{done("content_filter", &llm.Usage{InputTokens: 7, TotalTokens: 7})},
		},
		{
			file: "max_tokens.sse", stream: true,
			want: []llm.Event{
				text("A long answer that"),
				done("length", &llm.Usage{InputTokens: 5, OutputTokens: 16, TotalTokens: 21},
					llm.Part{Kind: llm.KindText, Text: "A long answer that"}),
			},
		},
		{
			file: "error.sse", stream: true,
			want:    []llm.Event{text("Partial")},
			wantErr: &llm.StreamError{Type: "UNAVAILABLE", Message: "The model is overloaded. Please try again later."},
		},
		{file: "cut.sse", stream: true, want: []llm.Event{text("The first"), text(" half")}, wantErr: llm.ErrTruncated},
		{file: "cut_midchunk.sse", stream: true, want: []llm.Event{text("The first")}, wantErr: llm.ErrTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			evs, err := decodeFile(t, tc.file, tc.stream)
			if diff := cmp.Diff(tc.want, evs); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			llmtest.CheckErr(t, err, tc.wantErr)
		})
	}
}

func TestDecodeNonStreamDocuments(t *testing.T) {
	tests := []struct {
		name, body string
		wantFinish string
		wantErr    error
	}{
		{"empty body", "", "", llm.ErrTruncated},
		{"cut document", `{"candidates":[{"content":{"parts":[{"text":"Hi`, "", llm.ErrTruncated},
		{"error document", `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`, "",
			&llm.StreamError{Type: "RESOURCE_EXHAUSTED", Message: "Resource has been exhausted"}},
		{"error without status", `{"error":{"code":500,"message":"Internal error"}}`, "", &llm.StreamError{Type: "500", Message: "Internal error"}},
		{"other reason", `{"candidates":[{"content":{"parts":[]},"finishReason":"MALFORMED_FUNCTION_CALL"}]}`, "malformed_function_call", nil},
		{"recitation", `{"candidates":[{"finishReason":"RECITATION"}]}`, "content_filter", nil},
		{"no reason", `{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}`, "", nil},
		{"call without args", `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"now"}}]},"finishReason":"STOP"}]}`, "tool_calls", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var last llm.Event
			var gotErr error
			for ev, err := range New().Decode(strings.NewReader(tc.body), false) {
				if err != nil {
					gotErr = err
					break
				}
				last = ev
			}
			llmtest.CheckErr(t, gotErr, tc.wantErr)
			if tc.wantErr == nil {
				if last.Kind != llm.EventDone || last.Finish != tc.wantFinish {
					t.Errorf("last event = %s finish %q, want done with finish %q", last.Kind, last.Finish, tc.wantFinish)
				}
			}
		})
	}
}

func TestDecodeSignatureOnlyPartIsKept(t *testing.T) {
	body := `{"candidates":[{"content":{"parts":[{"text":"Hi"},{"thoughtSignature":"U0lH"}]},"finishReason":"STOP"}]}`
	var done llm.Event
	for ev, err := range New().Decode(strings.NewReader(body), false) {
		if err != nil {
			t.Fatal(err)
		}
		done = ev
	}
	want := []llm.Part{{Kind: llm.KindText, Text: "Hi"}, {Kind: llm.KindText, Dialect: Name, Meta: metaJSON("U0lH", "")}}
	if diff := cmp.Diff(want, done.Message.Parts); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
}

func TestDecodeCallWithoutArgsHasEmptyObject(t *testing.T) {
	body := `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"now"}}]},"finishReason":"STOP"}]}`
	var done llm.Event
	for ev, err := range New().Decode(strings.NewReader(body), false) {
		if err != nil {
			t.Fatal(err)
		}
		done = ev
	}
	calls := done.Message.ToolCalls()
	if len(calls) != 1 || string(calls[0].Args) != "{}" {
		t.Fatalf("calls = %+v, want one with args {}", calls)
	}
}

func TestDecodeStopsWhenConsumerStops(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "tools.sse"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for range New().Decode(f, true) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("ranged %d events, want 2", n)
	}
}

func TestDecodeLineTooLong(t *testing.T) {
	body := "data: " + strings.Repeat("x", llm.MaxLine+1) + "\n\n"
	var gotErr error
	for _, err := range New().Decode(strings.NewReader(body), true) {
		if err != nil {
			gotErr = err
		}
	}
	if !errors.Is(gotErr, llm.ErrLineTooLong) {
		t.Fatalf("error = %v, want ErrLineTooLong", gotErr)
	}
}
