package openairesp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

func TestDecodeStream(t *testing.T) {
	llmtest.CheckRecorded(t, filepath.Join("testdata", "stream", "*.sse"), true, func(name string) llm.Dialect { return New() }, *update)
}

func TestDecodeWhole(t *testing.T) {
	llmtest.CheckRecorded(t, filepath.Join("testdata", "whole", "*.json"), false, func(name string) llm.Dialect { return New() }, *update)
}

func TestDecodeParallelCalls(t *testing.T) {
	in, err := os.ReadFile("testdata/stream/parallel_tools.sse")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := llmtest.Collect(t, New().Decode(bytes.NewReader(in), true))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Event{
		{Kind: llm.EventText, Text: "Checking both."},
		{Kind: llm.EventToolCall, Index: 0, CallID: "call_A", Name: "weather"},
		{Kind: llm.EventToolCall, Index: 1, CallID: "call_B", Name: "clock"},
		{Kind: llm.EventToolArgs, Index: 0, Text: `{"city":`},
		{Kind: llm.EventToolArgs, Index: 1, Text: `{}`},
		{Kind: llm.EventToolArgs, Index: 0, Text: `"Rome"}`},
		{Kind: llm.EventDone, Finish: "tool_calls",
			Usage: &llm.Usage{InputTokens: 50, OutputTokens: 30, TotalTokens: 80},
			Message: &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Kind: llm.KindText, Text: "Checking both.", Meta: json.RawMessage(`{"id":"msg_03","phase":"commentary"}`), Dialect: Name},
				{Kind: llm.KindToolCall, CallID: "call_A", Name: "weather", Args: json.RawMessage(`{"city":"Rome"}`), Meta: json.RawMessage(`{"id":"fc_03a"}`), Dialect: Name},
				{Kind: llm.KindToolCall, CallID: "call_B", Name: "clock", Args: json.RawMessage(`{}`), Meta: json.RawMessage(`{"id":"fc_03b"}`), Dialect: Name},
			}}},
	}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestDecodeStopEarly(t *testing.T) {
	in, _ := os.ReadFile("testdata/stream/parallel_tools.sse")
	n := 0
	for _, err := range New().Decode(bytes.NewReader(in), true) {
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
		{"event not JSON", strings.NewReader("data: {nope\n\ndata: {}\n\n"), true, "error: decode event: invalid character 'n' looking for beginning of object key string"},
		{"last event not JSON", strings.NewReader("data: {nope\n\n"), true, "ErrTruncated"},
		{"chat completions stream", strings.NewReader("data: {\"choices\":[]}\n\ndata: [DONE]\n\n"), true, "ErrTruncated"},
		{"completed without response", strings.NewReader("data: {\"type\":\"response.completed\"}\n\n"), true, "error: decode response.completed: no response"},
		{"read error", io.MultiReader(strings.NewReader("data: {}\n\n"), iotest.ErrReader(errors.New("connection reset"))), true, "error: read stream: connection reset"},
		{"line past the cap", strings.NewReader("data: " + strings.Repeat("x", llm.MaxLine+1)), true, "ErrLineTooLong"},
		{"whole not JSON", strings.NewReader("<html>"), false, "error: decode response: invalid character '<' looking for beginning of value"},
		{"whole read error", iotest.ErrReader(errors.New("connection reset")), false, "error: read response: connection reset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llmtest.Collect(t, New().Decode(tt.in, tt.stream))
			if err == nil {
				t.Fatal("no error")
			}
			if got := llmtest.ErrView(err); got != tt.want {
				t.Errorf("error %s, want %s", got, tt.want)
			}
		})
	}
}

// TestItemsThatAreNotObjects: an output item that is null (or missing) is no item: kept as a
// reasoning item's raw bytes, it went back as null in the input of every later request of the
// session, which the API refuses. A part stored that way before is not sent either.
func TestItemsThatAreNotObjects(t *testing.T) {
	const message = `{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"hi"}]}`
	for _, c := range []struct {
		name   string
		in     string
		stream bool
	}{
		{"stream", `data: {"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1"}}` + "\n\n" +
			`data: {"type":"response.output_item.done","output_index":0,"item":null}` + "\n\n" +
			`data: {"type":"response.output_item.done","output_index":1}` + "\n\n" +
			`data: {"type":"response.output_item.done","output_index":2,"item":` + message + `}` + "\n\n" +
			`data: {"type":"response.completed","response":{"status":"completed","output":[null,null]}}` + "\n\n", true},
		{"whole", `{"status":"completed","output":[null,"x",` + message + `]}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs, err := llmtest.Collect(t, New().Decode(strings.NewReader(c.in), c.stream))
			if err != nil {
				t.Fatal(err)
			}
			done := evs[len(evs)-1]
			for _, p := range done.Message.Parts {
				if p.Raw != nil {
					t.Errorf("a %s part holds raw %s", p.Kind, p.Raw)
				}
			}
			if got := done.Message.Text(); got != "hi" {
				t.Errorf("text %q, want hi", got)
			}
			req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "q"}}}, *done.Message}}
			enc, err := New().Encode(&req, llm.Patch{})
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(enc.Body, []byte("null")) {
				t.Errorf("the next request holds null: %s", enc.Body)
			}
		})
	}
	t.Run("stored", func(t *testing.T) {
		req := llm.Request{Model: "m", Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "q"}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindReasoning, Raw: json.RawMessage(`null`), Dialect: Name}, {Kind: llm.KindText, Text: "hi"}}},
		}}
		enc, err := New().Encode(&req, llm.Patch{})
		if err != nil {
			t.Fatal(err)
		}
		want := `{"model":"m","input":[{"role":"user","content":"q"},{"type":"message","role":"assistant","content":"hi"}]}`
		if string(enc.Body) != want {
			t.Errorf("body %s\nwant %s", enc.Body, want)
		}
	})
}
