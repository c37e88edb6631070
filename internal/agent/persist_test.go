package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sqlite"
)

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// sendable is what every provider checks of a transcript: each tool call of an assistant message
// is answered, once, by the tool messages right after it, and each tool result answers a call
// of the assistant message it follows.
func sendable(msgs []llm.Message) error {
	var open map[string]bool // calls of the last assistant message not yet answered
	closeOpen := func(i int) error {
		for id := range open {
			return fmt.Errorf("message %d: call %q has no result", i, id)
		}
		return nil
	}
	for i, m := range msgs {
		if m.Role != llm.RoleTool {
			if err := closeOpen(i); err != nil {
				return err
			}
			open = nil
		}
		switch m.Role {
		case llm.RoleAssistant:
			open = map[string]bool{}
			for _, c := range m.ToolCalls() {
				open[c.CallID] = true
			}
		case llm.RoleTool:
			for _, p := range m.Parts {
				if p.Kind != llm.KindToolResult {
					continue
				}
				if !open[p.CallID] {
					return fmt.Errorf("message %d: result for %q answers no open call", i, p.CallID)
				}
				delete(open, p.CallID)
			}
		}
	}
	return closeOpen(len(msgs))
}

// strictModel refuses a transcript a provider would refuse, and answers otherwise.
func strictModel() *script {
	return &script{steps: []func(*llm.Request) (*llm.Message, error){func(req *llm.Request) (*llm.Message, error) {
		if err := sendable(req.Messages); err != nil {
			return nil, fmt.Errorf("400 invalid request: %w", err)
		}
		return answer("fine")(req)
	}}}
}

// stream is a model whose one response is the given events and final error.
type stream struct {
	events []llm.Event
	err    error
}

func (s stream) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for _, ev := range s.events {
			if !yield(ev, nil) {
				return
			}
		}
		if s.err != nil {
			yield(llm.Event{}, s.err)
		}
	}
}

// faultyTools: "boom" panics, "fail" returns an error, "block" cancels the turn and runs until
// the cancellation reaches it.
type faultyTools struct{ cancel func() }

func (t *faultyTools) Tools(context.Context, string) ([]catalog.Tool, error) {
	return []catalog.Tool{{Name: "boom"}, {Name: "fail"}, {Name: "block"}, {Name: "echo"}}, nil
}

func (t *faultyTools) Call(ctx context.Context, _, name string, args json.RawMessage) (*catalog.Result, error) {
	switch name {
	case "boom":
		var m map[string]any
		return catalog.TextResult(m["x"].(string)), nil // a nil map and a failed assertion: a panic
	case "fail":
		return nil, errors.New("connection reset")
	case "block":
		t.cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	case "echo":
		return catalog.TextResult("echo " + string(args)), nil
	}
	return nil, fmt.Errorf("%w: %s", dispatch.ErrUnknownTool, name)
}

func toolCall(id, name string) llm.Part {
	return llm.Part{Kind: llm.KindToolCall, CallID: id, Name: name, Args: json.RawMessage(`{}`)}
}

// Whatever point a turn fails at, the user's message is kept and the next turn can send the
// transcript to a provider.
func TestFailedTurnLeavesASendableTranscript(t *testing.T) {
	done := func(parts ...llm.Part) llm.Event {
		return llm.Event{Kind: llm.EventDone, Message: &llm.Message{Role: llm.RoleAssistant, Parts: parts}, Finish: "tool_calls"}
	}
	for _, c := range []struct {
		name     string
		model    func(cancel func()) agent.Model
		maxSteps int
		wantErr  func(error) bool
		results  []string // the stored results of the failed turn, in order
	}{
		{name: "provider error before any event", model: func(func()) agent.Model {
			return stream{err: errors.New("503 overloaded")}
		}, wantErr: func(err error) bool { return strings.Contains(err.Error(), "503") }},
		{name: "provider error mid-stream", model: func(func()) agent.Model {
			return stream{events: []llm.Event{{Kind: llm.EventText, Text: "Half an ans"}, {Kind: llm.EventToolCall}}, err: errors.New("stream reset")}
		}, wantErr: func(err error) bool { return strings.Contains(err.Error(), "stream reset") }},
		{name: "stream cut before its end", model: func(func()) agent.Model {
			return stream{events: []llm.Event{{Kind: llm.EventText, Text: "Half"}}}
		}, wantErr: func(err error) bool { return errors.Is(err, llm.ErrTruncated) }},
		{name: "cancelled during the stream", model: func(cancel func()) agent.Model {
			return &script{steps: []func(*llm.Request) (*llm.Message, error){func(*llm.Request) (*llm.Message, error) {
				cancel()
				return nil, context.Canceled
			}}}
		}, wantErr: func(err error) bool { return errors.Is(err, context.Canceled) }},
		{name: "cancelled during a tool call", model: func(func()) agent.Model {
			return stream{events: []llm.Event{done(toolCall("a", "block"))}}
		}, wantErr: func(err error) bool { return errors.Is(err, context.Canceled) },
			results: []string{"The turn was cancelled while this tool call ran."}},
		{name: "tools that fail and panic, then the step limit", model: func(func()) agent.Model {
			return stream{events: []llm.Event{done(toolCall("a", "fail"), toolCall("b", "boom"), toolCall("c", "nope"))}}
		}, maxSteps: 1, wantErr: func(err error) bool { return errors.Is(err, agent.ErrMaxSteps) },
			results: []string{`Tool "fail" failed: connection reset`, `Tool "boom" failed: it crashed.`,
				`Unknown tool "nope": it is not among the tools offered in this session.`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := openStore(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, _ := newRunner(st, &faultyTools{cancel: cancel})
			_, err := r.Run(ctx, agent.Turn{Session: "s", ModelRef: "p/m", Model: c.model(cancel), MaxSteps: c.maxSteps,
				Input: []llm.Message{user("first question")}})
			if err == nil || !c.wantErr(err) {
				t.Fatalf("turn error = %v", err)
			}
			tr, err := st.Transcript(context.Background(), "s")
			if err != nil {
				t.Fatal(err)
			}
			if len(tr) == 0 || tr[0].Text() != "first question" {
				t.Fatalf("the user's message is lost: %+v", tr)
			}
			var results []string
			for _, m := range tr {
				for _, p := range m.Parts {
					if p.Kind == llm.KindToolResult {
						results = append(results, p.Text)
					}
				}
			}
			if diff := cmp.Diff(c.results, results); diff != "" {
				t.Errorf("stored results (-want +got):\n%s", diff)
			}
			next := strictModel()
			if _, err := r.Run(context.Background(), agent.Turn{Session: "s", ModelRef: "p/m", Model: next, Input: []llm.Message{user("again")}}); err != nil {
				t.Fatalf("the next turn: %v", err)
			}
			tr, _ = st.Transcript(context.Background(), "s")
			if err := sendable(tr); err != nil || tr[0].Text() != "first question" {
				t.Errorf("transcript after the next turn: %v", err)
			}
		})
	}
}

// A tool result that answers no open call (a client retrying a request the gateway already
// ran, a result arriving after its call was closed) would make every later request of the
// session one that providers refuse: it is not stored.
func TestStaleToolResultsAreNotStored(t *testing.T) {
	ctx := context.Background()
	ct := []llm.Tool{{Name: "get_weather"}}
	result := func(id, text string) llm.Message {
		return llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: id, Text: text}}}
	}
	for _, c := range []struct {
		name    string
		answer  []llm.Message // the client's answer to the call k, the turn after the call
		stale   []llm.Message // what the client sends next
		wantErr bool          // the stale input is refused (nothing in it is new)
	}{
		{name: "a retried answer", answer: []llm.Message{result("k", "sunny")}, stale: []llm.Message{result("k", "sunny")}, wantErr: true},
		{name: "an answer after the call was closed", answer: []llm.Message{user("never mind")}, stale: []llm.Message{result("k", "late")}, wantErr: true},
		{name: "an unknown call with a new message", answer: []llm.Message{result("k", "sunny")},
			stale: []llm.Message{result("zz", "what?"), user("and tomorrow?")}},
		{name: "an answer after a new message", answer: nil, stale: []llm.Message{user("hm"), result("k", "late")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := openStore(t)
			r, _ := newRunner(st, &tools{})
			m := &script{steps: []func(*llm.Request) (*llm.Message, error){calls(llm.Part{CallID: "k", Name: "get_weather", Args: json.RawMessage(`{}`)})}}
			if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, ClientTools: ct, Input: []llm.Message{user("weather?")}}); err != nil {
				t.Fatal(err)
			}
			if c.answer != nil {
				if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: strictModel(), ClientTools: ct, Input: c.answer}); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := st.Transcript(ctx, "s")
			_, err := r.Run(ctx, agent.Turn{Session: "s", Model: strictModel(), ClientTools: ct, Input: c.stale})
			if c.wantErr {
				if !errors.Is(err, agent.ErrBusy) {
					t.Errorf("stale input: err = %v, want ErrBusy", err)
				}
				if after, _ := st.Transcript(ctx, "s"); !cmp.Equal(before, after) {
					t.Errorf("refused input changed the transcript from %d to %d messages", len(before), len(after))
				}
			} else if err != nil {
				t.Errorf("input with something new: %v", err)
			}
			if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: strictModel(), ClientTools: ct, Input: []llm.Message{user("next")}}); err != nil {
				t.Errorf("the next turn: %v", err)
			}
			tr, _ := st.Transcript(ctx, "s")
			if err := sendable(tr); err != nil {
				t.Errorf("stored transcript: %v", err)
			}
		})
	}
}

// deletedMidTurn is the store with the session removed (a DELETE from the sessions API, or
// `nodmix sessions rm`) right after the turn's step is stored.
type deletedMidTurn struct {
	*sqlite.Store
	appends int
}

func (d *deletedMidTurn) Append(ctx context.Context, key string, base int, msgs []llm.Message) (*session.Info, error) {
	info, err := d.Store.Append(ctx, key, base, msgs)
	if d.appends++; err == nil && d.appends == 2 {
		if err := d.Store.DeleteSession(ctx, key); err != nil {
			return nil, err
		}
	}
	return info, err
}

// A session removed while its turn runs stays removed: the turn's counters do not bring it
// back as an empty row.
func TestDeletedSessionStaysDeleted(t *testing.T) {
	st := &deletedMidTurn{Store: openStore(t)}
	r := &agent.Runner{Sessions: st, Tools: &faultyTools{}}
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("done")}}
	if _, err := r.Run(context.Background(), agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("hi")}}); err != nil {
		t.Fatal(err)
	}
	rows, err := session.AllSessions(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 0 {
		t.Errorf("sessions after the removal = %+v, want none", rows)
	}
}

// A client's conversation may hold tool calls it never answered (a new session over the
// OpenAI-compatible API gets the whole conversation as input). Stored as they came, they made
// this turn and every later one a request providers refuse; they are closed like the
// unanswered calls that end a session.
func TestUnansweredCallsInTheInputAreClosed(t *testing.T) {
	ask := func(ids ...string) llm.Message {
		m := llm.Message{Role: llm.RoleAssistant}
		for _, id := range ids {
			m.Parts = append(m.Parts, toolCall(id, "lookup"))
		}
		return m
	}
	result := func(id string) llm.Message {
		return llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: id, Name: "lookup", Text: "found"}}}
	}
	for _, c := range []struct {
		name  string
		input []llm.Message
	}{
		{"a call, then a new question", []llm.Message{user("look"), ask("a"), user("never mind")}},
		{"two calls, one answered", []llm.Message{user("look"), ask("a", "b"), result("a"), user("and?")}},
		{"calls in two messages", []llm.Message{user("look"), ask("a"), ask("b"), result("b"), user("so?")}},
		{"a call ending the conversation", []llm.Message{user("look"), ask("a")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := openStore(t)
			r, _ := newRunner(st, &tools{})
			ct := []llm.Tool{{Name: "lookup"}}
			for _, in := range [][]llm.Message{c.input, {user("next")}} {
				if _, err := r.Run(context.Background(), agent.Turn{Session: "s", Model: strictModel(), ClientTools: ct, Input: in}); err != nil {
					t.Fatalf("turn: %v", err)
				}
			}
			tr, _ := st.Transcript(context.Background(), "s")
			if err := sendable(tr); err != nil {
				t.Errorf("stored transcript: %v", err)
			}
		})
	}
}
