package ollama

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

func TestDecodeRecorded(t *testing.T) {
	done := func(finish string, u *llm.Usage, parts ...llm.Part) llm.Event {
		return llm.Event{Kind: llm.EventDone, Message: &llm.Message{Role: llm.RoleAssistant, Parts: parts}, Usage: u, Finish: finish}
	}
	text := func(s string) llm.Event { return llm.Event{Kind: llm.EventText, Text: s} }
	reasoning := func(s string) llm.Event { return llm.Event{Kind: llm.EventReasoning, Text: s} }
	tests := []struct {
		file    string
		stream  bool
		want    []llm.Event
		wantErr error
	}{
		{
			file: "text.ndjson", stream: true,
			want: []llm.Event{text("Hello"), text(", world."),
				done("stop", &llm.Usage{InputTokens: 26, OutputTokens: 4, TotalTokens: 30}, llm.Part{Kind: llm.KindText, Text: "Hello, world."})},
		},
		{
			file: "thinking.ndjson", stream: true,
			want: []llm.Event{reasoning("17 times 23"), reasoning(" is 391."), text("17 × 23 = "), text("391"),
				done("stop", &llm.Usage{InputTokens: 18, OutputTokens: 57, TotalTokens: 75},
					llm.Part{Kind: llm.KindReasoning, Text: "17 times 23 is 391.", Dialect: Name},
					llm.Part{Kind: llm.KindText, Text: "17 × 23 = 391"})},
		},
		{
			file: "tools.ndjson", stream: true,
			want: []llm.Event{
				reasoning("Both cities, two calls."),
				{Kind: llm.EventToolCall, Index: 0, CallID: "call_0", Name: "get_weather"},
				{Kind: llm.EventToolArgs, Index: 0, Text: `{"city":"Paris"}`},
				{Kind: llm.EventToolCall, Index: 1, CallID: "call_1", Name: "get_weather"},
				{Kind: llm.EventToolArgs, Index: 1, Text: `{"city":"Berlin","unit":"celsius"}`},
				done("tool_calls", &llm.Usage{InputTokens: 140, OutputTokens: 41, TotalTokens: 181},
					llm.Part{Kind: llm.KindReasoning, Text: "Both cities, two calls.", Dialect: Name},
					llm.Part{Kind: llm.KindToolCall, CallID: "call_0", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
					llm.Part{Kind: llm.KindToolCall, CallID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Berlin","unit":"celsius"}`)}),
			},
		},
		{
			file: "tools_ids.ndjson", stream: true,
			want: []llm.Event{
				{Kind: llm.EventToolCall, Index: 0, CallID: "call_k3x9", Name: "get_weather"},
				{Kind: llm.EventToolArgs, Index: 0, Text: `{"city":"Paris"}`},
				{Kind: llm.EventToolCall, Index: 1, CallID: "call_p2m7", Name: "now"},
				{Kind: llm.EventToolArgs, Index: 1, Text: `{}`},
				done("tool_calls", &llm.Usage{InputTokens: 90, OutputTokens: 30, TotalTokens: 120},
					llm.Part{Kind: llm.KindToolCall, CallID: "call_k3x9", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
					llm.Part{Kind: llm.KindToolCall, CallID: "call_p2m7", Name: "now", Args: json.RawMessage(`{}`)}),
			},
		},
		{
			file: "nonstream.json", stream: false,
			want: []llm.Event{
				reasoning("The user wants the weather; call the tool."),
				{Kind: llm.EventToolCall, Index: 0, CallID: "call_0", Name: "get_weather"},
				{Kind: llm.EventToolArgs, Index: 0, Text: `{"city": "Toronto", "format": "celsius"}`},
				done("tool_calls", &llm.Usage{InputTokens: 155, OutputTokens: 81, TotalTokens: 236},
					llm.Part{Kind: llm.KindReasoning, Text: "The user wants the weather; call the tool.", Dialect: Name},
					llm.Part{Kind: llm.KindToolCall, CallID: "call_0", Name: "get_weather", Args: json.RawMessage(`{"city": "Toronto", "format": "celsius"}`)}),
			},
		},
		{
			file: "unknown.ndjson", stream: true,
			want: []llm.Event{text("Known"), text(" text."),
				done("stop", &llm.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}, llm.Part{Kind: llm.KindText, Text: "Known text."})},
		},
		{
			// Nothing after the done line is read.
			file: "length.ndjson", stream: true,
			want: []llm.Event{text("A long answer that"),
				done("length", &llm.Usage{InputTokens: 5, OutputTokens: 16, TotalTokens: 21}, llm.Part{Kind: llm.KindText, Text: "A long answer that"})},
		},
		{
			file: "error.ndjson", stream: true,
			want:    []llm.Event{text("Partial")},
			wantErr: &llm.StreamError{Message: "an error was encountered while running the model: unexpected EOF"},
		},
		{file: "cut.ndjson", stream: true, want: []llm.Event{text("The first"), text(" half")}, wantErr: llm.ErrTruncated},
		{file: "cut_midline.ndjson", stream: true, want: []llm.Event{text("The first")}, wantErr: llm.ErrTruncated},
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

func TestDecodeDocuments(t *testing.T) {
	tests := []struct {
		name, body string
		stream     bool
		wantFinish string
		wantErr    error
	}{
		{"empty body", "", false, "", llm.ErrTruncated},
		{"empty stream", "", true, "", llm.ErrTruncated},
		{"cut document", `{"message":{"content":"Hi`, false, "", llm.ErrTruncated},
		{"document without done", `{"message":{"content":"Hi"}}`, false, "", llm.ErrTruncated},
		{"error document", `{"error":"\"llama3.2\" does not support thinking"}`, false, "", &llm.StreamError{Message: `"llama3.2" does not support thinking`}},
		{"error object from a proxy", `{"error":{"message":"upstream gone","type":"proxy"}}` + "\n", true, "", &llm.StreamError{Message: "upstream gone"}},
		{"not JSON", "<html>", true, "", nil},
		{"done without reason", `{"message":{"content":"x"},"done":true}`, false, "", nil},
		{"load", `{"message":{"content":""},"done":true,"done_reason":"load"}`, false, "load", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var last llm.Event
			var gotErr error
			for ev, err := range New().Decode(strings.NewReader(tc.body), tc.stream) {
				if err != nil {
					gotErr = err
					break
				}
				last = ev
			}
			if tc.name == "not JSON" {
				if gotErr == nil {
					t.Fatal("no error for a line that is not JSON")
				}
				return
			}
			llmtest.CheckErr(t, gotErr, tc.wantErr)
			if tc.wantErr == nil && (last.Kind != llm.EventDone || last.Finish != tc.wantFinish) {
				t.Errorf("last event = %s finish %q, want done with finish %q", last.Kind, last.Finish, tc.wantFinish)
			}
		})
	}
}

func TestDecodeStopsWhenConsumerStops(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "tools.ndjson"))
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
	body := `{"message":{"content":"` + strings.Repeat("x", llm.MaxLine) + `"}}` + "\n"
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
