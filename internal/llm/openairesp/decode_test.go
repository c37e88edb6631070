package openairesp

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

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
)

// view is an Event (or the error that ended a sequence) as a golden line.
type view struct {
	Kind    llm.EventKind `json:"kind,omitempty"`
	Text    string        `json:"text,omitempty"`
	Index   *int          `json:"index,omitempty"`
	CallID  string        `json:"call_id,omitempty"`
	Name    string        `json:"name,omitempty"`
	Finish  string        `json:"finish,omitempty"`
	Usage   *llm.Usage    `json:"usage,omitempty"`
	Message *llm.Message  `json:"message,omitempty"`
	Error   string        `json:"error,omitempty"`
}

func errView(err error) string {
	var se *llm.StreamError
	switch {
	case errors.Is(err, llm.ErrTruncated):
		return "ErrTruncated"
	case errors.Is(err, llm.ErrLineTooLong):
		return "ErrLineTooLong"
	case errors.As(err, &se):
		return fmt.Sprintf("StreamError type=%q message=%q", se.Type, se.Message)
	}
	return "error: " + err.Error()
}

// collect ranges over a decode to its end, checking the sequence's contract on the way.
func collect(t *testing.T, seq func(func(llm.Event, error) bool)) ([]llm.Event, error) {
	t.Helper()
	var evs []llm.Event
	var last error
	ended := false
	seq(func(ev llm.Event, err error) bool {
		if ended {
			t.Fatal("event after the end of the sequence")
		}
		if err != nil {
			last, ended = err, true
			return false
		}
		evs = append(evs, ev)
		if ev.Kind == llm.EventDone {
			ended = true
		}
		return true
	})
	if !ended {
		t.Fatal("sequence ended without EventDone or an error")
	}
	return evs, last
}

func render(evs []llm.Event, err error) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, ev := range evs {
		v := view{Kind: ev.Kind, Text: ev.Text, CallID: ev.CallID, Name: ev.Name, Finish: ev.Finish, Usage: ev.Usage, Message: ev.Message}
		if ev.Kind == llm.EventToolCall || ev.Kind == llm.EventToolArgs {
			v.Index = &ev.Index
		}
		_ = enc.Encode(v)
	}
	if err != nil {
		_ = enc.Encode(view{Error: errView(err)})
	}
	return b.String()
}

func checkEventsGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

func TestDecodeStream(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "stream", "*.sse"))
	if len(files) == 0 {
		t.Fatal("no recorded streams")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sse")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d := New()
			evs, err := collect(t, d.Decode(bytes.NewReader(in), true))
			got := render(evs, err)
			checkEventsGolden(t, strings.TrimSuffix(f, ".sse")+".events", got)
			// A byte at a time, the events are the same.
			evs2, err2 := collect(t, d.Decode(iotest.OneByteReader(bytes.NewReader(in)), true))
			if diff := cmp.Diff(got, render(evs2, err2)); diff != "" {
				t.Errorf("read a byte at a time (-whole +bytes):\n%s", diff)
			}
			checkDeltasMatchDone(t, evs)
		})
	}
}

// checkDeltasMatchDone holds the deltas to the final message: shown text is the message's text,
// and each announced call's argument deltas add up to its arguments.
func checkDeltasMatchDone(t *testing.T, evs []llm.Event) {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Kind != llm.EventDone {
		return
	}
	done := evs[len(evs)-1].Message
	var text, reasoning strings.Builder
	args := map[int]string{}
	ids := map[int]string{}
	for _, ev := range evs {
		switch ev.Kind {
		case llm.EventText:
			text.WriteString(ev.Text)
		case llm.EventReasoning:
			reasoning.WriteString(ev.Text)
		case llm.EventToolCall:
			ids[ev.Index] = ev.CallID
		case llm.EventToolArgs:
			args[ev.Index] += ev.Text
		}
	}
	if text.String() != done.Text() {
		t.Errorf("text deltas %q, message text %q", text.String(), done.Text())
	}
	var rtext string
	for _, p := range done.Parts {
		if p.Kind == llm.KindReasoning {
			rtext += p.Text
		}
	}
	if reasoning.String() != rtext {
		t.Errorf("reasoning deltas %q, message reasoning %q", reasoning.String(), rtext)
	}
	for i, c := range done.ToolCalls() {
		if id, ok := ids[i]; ok && id != c.CallID {
			t.Errorf("call %d announced as %q, done as %q", i, id, c.CallID)
		}
		if a, ok := args[i]; ok && json.Valid([]byte(a)) && a != llm.ArgsText(c.Args) {
			t.Errorf("call %d: argument deltas %q, args %s", i, a, c.Args)
		}
	}
}

func TestDecodeWhole(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "whole", "*.json"))
	if len(files) == 0 {
		t.Fatal("no recorded responses")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(t, New().Decode(bytes.NewReader(in), false))
			if err == nil && len(evs) != 1 {
				t.Errorf("a whole response decodes to %d events, want one EventDone", len(evs))
			}
			checkEventsGolden(t, strings.TrimSuffix(f, ".json")+".events", render(evs, err))
		})
	}
}

func TestDecodeParallelCalls(t *testing.T) {
	in, err := os.ReadFile("testdata/stream/parallel_tools.sse")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(t, New().Decode(bytes.NewReader(in), true))
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
			_, err := collect(t, New().Decode(tt.in, tt.stream))
			if err == nil {
				t.Fatal("no error")
			}
			if got := errView(err); got != tt.want {
				t.Errorf("error %s, want %s", got, tt.want)
			}
		})
	}
}
