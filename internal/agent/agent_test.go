package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
)

// script is a model that answers each step with the next message and records the requests.
type script struct {
	mu    sync.Mutex
	steps []func(req *llm.Request) (*llm.Message, error)
	reqs  []*llm.Request
}

func (s *script) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		s.mu.Lock()
		i := len(s.reqs)
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
		if i >= len(s.steps) {
			yield(llm.Event{}, errors.New("script: no more steps"))
			return
		}
		msg, err := s.steps[i](req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if t := msg.Text(); t != "" && !yield(llm.Event{Kind: llm.EventText, Text: t}, nil) {
			return
		}
		yield(llm.Event{Kind: llm.EventDone, Message: msg, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 2}, Finish: "stop"}, nil)
	}
}

func answer(text string) func(*llm.Request) (*llm.Message, error) {
	return func(*llm.Request) (*llm.Message, error) {
		return &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindText, Text: text}}}, nil
	}
}

func calls(cs ...llm.Part) func(*llm.Request) (*llm.Message, error) {
	return func(*llm.Request) (*llm.Message, error) {
		for i := range cs {
			cs[i].Kind = llm.KindToolCall
		}
		return &llm.Message{Role: llm.RoleAssistant, Parts: cs}, nil
	}
}

// tools is a fake catalog view: echo and slow run; anything else is unknown.
type tools struct {
	running, peak atomic.Int32
}

func (t *tools) Tools(context.Context, string) ([]catalog.Tool, error) {
	return []catalog.Tool{{ID: "nodmix:core:echo", Name: "echo"}, {ID: "nodmix:core:slow", Name: "slow"}}, nil
}

func (t *tools) Call(ctx context.Context, _, name string, args json.RawMessage) (*catalog.Result, error) {
	switch name {
	case "echo":
		return catalog.TextResult("echo " + string(args)), nil
	case "slow":
		n := t.running.Add(1)
		defer t.running.Add(-1)
		for {
			p := t.peak.Load()
			if n <= p || t.peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-time.After(50 * time.Millisecond):
			return catalog.TextResult("slow done " + string(args)), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("%w: %s", dispatch.ErrUnknownTool, name)
}

func user(text string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: text}}}
}

func newRunner(st session.Store, tl agent.Tools) (*agent.Runner, *[]any) {
	var logs []any
	var mu sync.Mutex
	return &agent.Runner{Sessions: st, Tools: tl, Log: func(_ string, line any) {
		mu.Lock()
		logs = append(logs, line)
		mu.Unlock()
	}}, &logs
}

func TestAnswerWithoutTools(t *testing.T) {
	st := session.NewMemory()
	r, logs := newRunner(st, &tools{})
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("hello there")}}
	var texts []string
	res, err := r.Run(context.Background(), agent.Turn{Session: "s", ModelRef: "x/y", Model: m, ModelID: "y", Input: []llm.Message{user("hi")},
		Observe: func(ev agent.Event) {
			if ev.Kind == agent.EventText {
				texts = append(texts, ev.Text)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello there" || res.Steps != 1 {
		t.Errorf("result = %+v", res)
	}
	if diff := cmp.Diff([]string{"hello there"}, texts); diff != "" {
		t.Errorf("streamed text (-want +got):\n%s", diff)
	}
	tr, _ := st.Transcript(context.Background(), "s")
	if len(tr) != 2 || tr[1].Role != llm.RoleAssistant {
		t.Errorf("transcript = %+v", tr)
	}
	if len(*logs) != 1 {
		t.Fatalf("model log lines = %d, want 1", len(*logs))
	}
	b, _ := json.Marshal((*logs)[0])
	var line map[string]any
	_ = json.Unmarshal(b, &line)
	if line["type"] != "model" || line["outcome"] != "ok" || line["tools"] != float64(2) {
		t.Errorf("log line = %s", b)
	}
	if m.reqs[0].Model != "y" || len(m.reqs[0].Tools) != 2 {
		t.Errorf("request = %+v", m.reqs[0])
	}
}

func TestToolLoopParallelInOrder(t *testing.T) {
	st := session.NewMemory()
	tl := &tools{}
	r, _ := newRunner(st, tl)
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){
		calls(llm.Part{CallID: "a", Name: "slow", Args: json.RawMessage(`{"n":1}`)},
			llm.Part{CallID: "b", Name: "slow", Args: json.RawMessage(`{"n":2}`)},
			llm.Part{CallID: "c", Name: "nope", Args: json.RawMessage(`{}`)}),
		answer("done"),
	}}
	var mu sync.Mutex
	var started []string
	res, err := r.Run(context.Background(), agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("go")}, Observe: func(ev agent.Event) {
		if ev.Kind == agent.EventToolStart {
			mu.Lock()
			started = append(started, ev.Call.CallID)
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done" || res.Steps != 2 {
		t.Errorf("result = %+v", res)
	}
	if tl.peak.Load() != 2 {
		t.Errorf("parallel calls peaked at %d running, want 2", tl.peak.Load())
	}
	if len(started) != 3 {
		t.Errorf("tool starts = %v", started)
	}
	// Step 2's request carries the results in call order.
	got := m.reqs[1].Messages
	var results []llm.Part
	for _, msg := range got[2:] {
		results = append(results, msg.Parts...)
	}
	want := []llm.Part{
		{Kind: llm.KindToolResult, CallID: "a", Name: "slow", Text: `slow done {"n":1}`},
		{Kind: llm.KindToolResult, CallID: "b", Name: "slow", Text: `slow done {"n":2}`},
		{Kind: llm.KindToolResult, CallID: "c", Name: "nope", Text: `Unknown tool "nope": it is not among the tools offered in this session.`, IsError: true},
	}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	tr, _ := st.Transcript(context.Background(), "s")
	if len(tr) != 6 { // user, assistant(calls), 3 results, assistant
		t.Errorf("transcript has %d messages, want 6", len(tr))
	}
	info, _ := st.Session(context.Background(), "s")
	if info.Counters["model_calls"] != 2 || info.Counters["tool_calls"] != 3 || info.Counters["input_tokens"] != 20 {
		t.Errorf("counters = %v", info.Counters)
	}
}

func TestClientToolEndsTurn(t *testing.T) {
	st := session.NewMemory()
	r, _ := newRunner(st, &tools{})
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){
		calls(llm.Part{CallID: "k", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}),
		func(req *llm.Request) (*llm.Message, error) {
			last := req.Messages[len(req.Messages)-1]
			return answer("weather: " + last.Parts[0].Text)(req)
		},
	}}
	ct := []llm.Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`)}}
	res, err := r.Run(context.Background(), agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("weather?")}, ClientTools: ct})
	if err != nil {
		t.Fatal(err)
	}
	if res.Finish != "tool_calls" || len(res.ClientCalls) != 1 || res.ClientCalls[0].CallID != "k" {
		t.Fatalf("result = %+v", res)
	}
	if len(m.reqs[0].Tools) != 3 {
		t.Errorf("tools offered = %d, want 3 (2 server + 1 client)", len(m.reqs[0].Tools))
	}
	// The client answers; the same session continues.
	res, err = r.Run(context.Background(), agent.Turn{Session: "s", Model: m, ClientTools: ct, Input: []llm.Message{{Role: llm.RoleTool,
		Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "k", Name: "get_weather", Text: "sunny"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "weather: sunny" {
		t.Errorf("answer = %q", res.Text)
	}
}

func TestClientToolDeniedIsNotOffered(t *testing.T) {
	r, _ := newRunner(session.NewMemory(), &tools{})
	r.Allowed = func(t *catalog.Tool) bool { return t.ID != "client:client:rm_rf" }
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("ok")}}
	_, err := r.Run(context.Background(), agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("x")},
		ClientTools: []llm.Tool{{Name: "rm_rf"}, {Name: "fine"}, {Name: "fine"}}}) // declared twice: offered once
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range m.reqs[0].Tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff([]string{"echo", "slow", "fine"}, names); diff != "" {
		t.Errorf("offered (-want +got):\n%s", diff)
	}
}

// A model may call a client tool policy keeps from it (named in an earlier turn, or made up):
// the call never reaches the client, which would run what policy denies; the model reads that
// it cannot be called.
func TestDeniedClientToolIsNotCalled(t *testing.T) {
	st := session.NewMemory()
	r, _ := newRunner(st, &tools{})
	r.Allowed = func(t *catalog.Tool) bool { return t.ID != "client:client:rm_rf" }
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){
		calls(llm.Part{CallID: "k", Name: "rm_rf", Args: json.RawMessage(`{"path":"/"}`)}),
		answer("I cannot do that."),
	}}
	res, err := r.Run(context.Background(), agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("clean up")},
		ClientTools: []llm.Tool{{Name: "rm_rf"}, {Name: "fine"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ClientCalls) != 0 || res.Finish == "tool_calls" {
		t.Fatalf("the denied call went to the client: %+v", res.ClientCalls)
	}
	tr, _ := st.Transcript(context.Background(), "s")
	if len(tr) != 4 || tr[2].Role != llm.RoleTool || !tr[2].Parts[0].IsError || res.Text != "I cannot do that." {
		t.Errorf("transcript = %+v, answer %q", tr, res.Text)
	}
}

func TestStepLimit(t *testing.T) {
	st := session.NewMemory()
	r, _ := newRunner(st, &tools{})
	loop := calls(llm.Part{CallID: "x", Name: "echo", Args: json.RawMessage(`{}`)})
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){loop, loop, loop, loop}}
	_, err := r.Run(context.Background(), agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("x")}, MaxSteps: 3})
	if !errors.Is(err, agent.ErrMaxSteps) {
		t.Fatalf("err = %v, want ErrMaxSteps", err)
	}
	if len(m.reqs) != 3 {
		t.Errorf("model calls = %d, want 3", len(m.reqs))
	}
	tr, _ := st.Transcript(context.Background(), "s")
	if len(tr) != 7 {
		t.Errorf("transcript = %d messages, want 7 (nothing lost)", len(tr))
	}
}

func TestProviderErrorKeepsInput(t *testing.T) {
	st := session.NewMemory()
	r, logs := newRunner(st, &tools{})
	boom := errors.New(`provider "p": 401 Unauthorized`)
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){func(*llm.Request) (*llm.Message, error) { return nil, boom }}}
	_, err := r.Run(context.Background(), agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("x")}})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	tr, _ := st.Transcript(context.Background(), "s")
	if len(tr) != 1 {
		t.Errorf("transcript = %d, want the user message kept", len(tr))
	}
	b, _ := json.Marshal((*logs)[0])
	if !json.Valid(b) || !strings.Contains(string(b), `"outcome":"error"`) {
		t.Errorf("log = %s", b)
	}
}

func TestCancelStopsToolCalls(t *testing.T) {
	st := session.NewMemory()
	r, _ := newRunner(st, &tools{})
	ctx, cancel := context.WithCancel(context.Background())
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){
		func(req *llm.Request) (*llm.Message, error) {
			time.AfterFunc(10*time.Millisecond, cancel)
			return calls(llm.Part{CallID: "a", Name: "slow", Args: json.RawMessage(`{}`)})(req)
		},
		answer("never"),
	}}
	_, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("x")}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	tr, _ := st.Transcript(context.Background(), "s")
	if n := len(tr); n != 3 || !tr[2].Parts[0].IsError {
		t.Errorf("transcript = %+v; want the call answered with the cancellation", tr)
	}
}

// TestRemovedDuringTurn: a session removed while its turn waits for the model ends the turn
// with ErrRemoved, not ErrBusy (the removal is not another turn), and stays removed.
func TestRemovedDuringTurn(t *testing.T) {
	st := session.NewMemory()
	r, _ := newRunner(st, &tools{})
	ctx := context.Background()
	if _, err := st.Append(ctx, "s", 0, []llm.Message{user("earlier")}); err != nil {
		t.Fatal(err)
	}
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){func(req *llm.Request) (*llm.Message, error) {
		if err := st.DeleteSession(ctx, "s"); err != nil {
			return nil, err
		}
		return answer("late")(req)
	}}}
	_, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("now")}})
	if !errors.Is(err, agent.ErrRemoved) || errors.Is(err, agent.ErrBusy) {
		t.Errorf("err = %v, want ErrRemoved", err)
	}
	if _, err := st.Transcript(ctx, "s"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("transcript after the turn: %v, want ErrNotFound", err)
	}
}

func TestOpaquePartsStayWithTheirProvider(t *testing.T) {
	st := session.NewMemory()
	r, _ := newRunner(st, &tools{})
	signed := func(*llm.Request) (*llm.Message, error) {
		return &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Kind: llm.KindReasoning, Text: "hm", Dialect: "anthropic-messages", Raw: json.RawMessage(`{"type":"thinking","signature":"s"}`)},
			{Kind: llm.KindText, Text: "one"},
		}}, nil
	}
	first := &script{steps: []func(*llm.Request) (*llm.Message, error){signed, answer("again")}}
	ctx := context.Background()
	if _, err := r.Run(ctx, agent.Turn{Session: "s", ModelRef: "anthropic/claude", Model: first, Input: []llm.Message{user("a")}}); err != nil {
		t.Fatal(err)
	}
	tr, _ := st.Transcript(ctx, "s")
	if tr[1].Parts[0].Provider != "anthropic" {
		t.Fatalf("reasoning part not stamped: %+v", tr[1].Parts[0])
	}
	// The same provider gets its block back; another one sharing the dialect does not.
	if _, err := r.Run(ctx, agent.Turn{Session: "s", ModelRef: "anthropic/claude", Model: first, Input: []llm.Message{user("b")}}); err != nil {
		t.Fatal(err)
	}
	if got := first.reqs[1].Messages[1].Parts; len(got) != 2 || string(got[0].Raw) == "" {
		t.Errorf("own provider lost its block: %+v", got)
	}
	other := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("x")}}
	if _, err := r.Run(ctx, agent.Turn{Session: "s", ModelRef: "minimax/m", Model: other, Input: []llm.Message{user("c")}}); err != nil {
		t.Fatal(err)
	}
	if got := other.reqs[0].Messages[1].Parts; len(got) != 1 || got[0].Kind != llm.KindText {
		t.Errorf("another provider got the signed block: %+v", got)
	}
	if tr, _ := st.Transcript(ctx, "s"); len(tr[1].Parts) != 2 {
		t.Errorf("the stored transcript must keep the block: %+v", tr[1])
	}
}

func TestUnansweredClientCallsAreClosed(t *testing.T) {
	st := session.NewMemory()
	r, _ := newRunner(st, &tools{})
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){
		calls(llm.Part{CallID: "k", Name: "client_fn", Args: json.RawMessage(`{}`)}),
		answer("ok"),
	}}
	ct := []llm.Tool{{Name: "client_fn"}}
	ctx := context.Background()
	if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, ClientTools: ct, Input: []llm.Message{user("a")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, agent.Turn{Session: "s", Model: m, ClientTools: ct, Input: []llm.Message{user("never mind")}}); err != nil {
		t.Fatal(err)
	}
	msgs := m.reqs[1].Messages
	if len(msgs) != 4 || msgs[2].Role != llm.RoleTool || msgs[2].Parts[0].CallID != "k" || !msgs[2].Parts[0].IsError {
		t.Errorf("step 2 messages = %+v", msgs)
	}
}

// hugeTools is the fake view with one tool whose server lists a description of a megabyte.
type hugeTools struct{ tools }

func (h *hugeTools) Tools(context.Context, string) ([]catalog.Tool, error) {
	return []catalog.Tool{{ID: "mcp:big:t", Name: "t", Description: strings.Repeat("x", 1<<20)}}, nil
}

// TestHugeDescriptionsAreCut: a tool's description reaches the model cut at
// catalog.MaxModelDescription, so one server's megabyte does not go with every request.
func TestHugeDescriptionsAreCut(t *testing.T) {
	r, _ := newRunner(session.NewMemory(), &hugeTools{})
	m := &script{steps: []func(*llm.Request) (*llm.Message, error){answer("ok")}}
	if _, err := r.Run(context.Background(), agent.Turn{Session: "s", Model: m, Input: []llm.Message{user("x")}}); err != nil {
		t.Fatal(err)
	}
	got := m.reqs[0].Tools[0].Description
	want := (&catalog.Tool{Description: strings.Repeat("x", 1<<20)}).ModelDescription()
	if got != want || len(got) > catalog.MaxModelDescription+64 {
		t.Errorf("description of %d bytes sent, want the %d of ModelDescription", len(got), len(want))
	}
}
