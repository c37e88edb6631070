package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
)

// Collect ranges over a Decode sequence to its end and holds it to the Dialect contract: it
// ends with EventDone or an error, and yields nothing after either (Collect keeps accepting,
// so a sequence that does not stop by itself fails the test). It returns the events and the
// error that ended the sequence.
func Collect(t testing.TB, seq iter.Seq2[llm.Event, error]) ([]llm.Event, error) {
	t.Helper()
	var evs []llm.Event
	var last error
	ended := false
	for ev, err := range seq {
		if ended {
			t.Fatalf("event after the end of the sequence: %+v, %v", ev, err)
		}
		if err != nil {
			last, ended = err, true
			continue
		}
		evs = append(evs, ev)
		ended = ev.Kind == llm.EventDone
	}
	if !ended {
		t.Fatal("sequence ended without EventDone or an error")
	}
	return evs, last
}

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

// ErrView names a decode error by what callers test: the sentinels, a *llm.StreamError with
// its fields (the status only when it has one), else the message.
func ErrView(err error) string {
	var se *llm.StreamError
	switch {
	case errors.Is(err, llm.ErrTruncated):
		return "ErrTruncated"
	case errors.Is(err, llm.ErrLineTooLong):
		return "ErrLineTooLong"
	case errors.As(err, &se) && se.Status != 0:
		return fmt.Sprintf("StreamError type=%q message=%q status=%d", se.Type, se.Message, se.Status)
	case errors.As(err, &se):
		return fmt.Sprintf("StreamError type=%q message=%q", se.Type, se.Message)
	}
	return "error: " + err.Error()
}

// Render writes events, and the error that ended them, one JSON line each, as the events
// golden files hold them.
func Render(evs []llm.Event, err error) string {
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
		_ = enc.Encode(view{Error: ErrView(err)})
	}
	return b.String()
}

// CheckDeltas holds the deltas of a sequence that ended in EventDone to its message: shown text
// is the message's text, reasoning deltas its reasoning parts' text, and each announced call
// keeps its id and has argument deltas adding up to its arguments (as ArgsText sends them back).
func CheckDeltas(t testing.TB, evs []llm.Event) {
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

// CheckErr matches the error that ended a sequence with want: none, a *llm.StreamError equal
// to want's, or errors.Is.
func CheckErr(t testing.TB, got, want error) {
	t.Helper()
	var wantSE *llm.StreamError
	switch {
	case want == nil:
		if got != nil {
			t.Errorf("error = %v, want none", got)
		}
	case errors.As(want, &wantSE):
		var se *llm.StreamError
		if !errors.As(got, &se) {
			t.Fatalf("error = %v, want a *llm.StreamError", got)
		}
		if diff := cmp.Diff(wantSE, se); diff != "" {
			t.Errorf("stream error (-want +got):\n%s", diff)
		}
	default:
		if !errors.Is(got, want) {
			t.Errorf("error = %v, want %v", got, want)
		}
	}
}

// CheckSendBack holds an EventDone to what the next step needs of it: an assistant message
// whose tool call arguments and Raw items are JSON, and which d encodes again after a user
// turn.
func CheckSendBack(t testing.TB, d llm.Dialect, done llm.Event) {
	t.Helper()
	if done.Message == nil || done.Message.Role != llm.RoleAssistant {
		t.Fatalf("EventDone without an assistant message: %+v", done)
	}
	for _, p := range done.Message.Parts {
		if p.Kind == llm.KindToolCall && !json.Valid(p.Args) {
			t.Fatalf("tool call args are not JSON: %q", p.Args)
		}
		if p.Raw != nil && !json.Valid(p.Raw) {
			t.Fatalf("raw item is not JSON: %q", p.Raw)
		}
	}
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "q"}}}, *done.Message}}
	enc, err := d.Encode(&req, llm.Patch{})
	if err != nil {
		t.Fatalf("a decoded message does not encode: %v", err)
	}
	if !json.Valid(enc.Body) {
		t.Fatalf("encoded body is not JSON: %s", enc.Body)
	}
}
