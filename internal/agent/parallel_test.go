package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
)

// heldTools holds every call until the test lets it go, and counts the calls running at once.
type heldTools struct {
	started chan struct{}
	release chan struct{}

	mu        sync.Mutex
	active    int
	maxActive int
}

func (h *heldTools) Tools(context.Context, string) ([]catalog.Tool, error) {
	return []catalog.Tool{{Name: "work"}}, nil
}

func (h *heldTools) Call(ctx context.Context, _, _ string, _ json.RawMessage) (*catalog.Result, error) {
	h.mu.Lock()
	h.active++
	h.maxActive = max(h.maxActive, h.active)
	h.mu.Unlock()
	h.started <- struct{}{}
	<-h.release
	h.mu.Lock()
	h.active--
	h.mu.Unlock()
	return catalog.TextResult("done"), nil
}

// A step of many tool calls runs at most MaxParallelCalls of them at once, and still answers
// every call, in order.
func TestParallelCallsAreBounded(t *testing.T) {
	const calls = 5 * agent.MaxParallelCalls
	h := &heldTools{started: make(chan struct{}, calls), release: make(chan struct{}, calls)}
	var parts []llm.Part
	for i := range calls {
		parts = append(parts, toolCall(fmt.Sprintf("c%d", i), "work"))
	}
	model := &script{steps: []func(*llm.Request) (*llm.Message, error){
		func(*llm.Request) (*llm.Message, error) {
			return &llm.Message{Role: llm.RoleAssistant, Parts: parts}, nil
		},
		func(*llm.Request) (*llm.Message, error) {
			return &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindText, Text: "all done"}}}, nil
		},
	}}
	r, _ := newRunner(session.NewMemory(), h)
	done := make(chan error, 1)
	var res *agent.Result
	go func() {
		var err error
		res, err = r.Run(context.Background(), agent.Turn{Session: "s", ModelRef: "p/m", Model: model, Input: []llm.Message{user("go")}})
		done <- err
	}()
	guard := time.After(time.Minute) // a hang guard, not a measure
	released := 0
	for started := 0; started < calls; {
		select {
		case <-h.started:
			started++
		case <-guard:
			t.Fatalf("only %d of %d calls started", started, calls)
		}
		if started == agent.MaxParallelCalls && released == 0 {
			// Nothing has ended, so nothing more may start: give a call past the bound a
			// moment to show itself (a stalled machine can only make this pass wrongly).
			select {
			case <-h.started:
				t.Fatalf("call %d started while %d ran", started+1, started)
			case <-time.After(100 * time.Millisecond):
			}
		}
		if started-released == agent.MaxParallelCalls {
			h.release <- struct{}{} // one goes once the bound's worth runs
			released++
		}
	}
	for ; released < calls; released++ {
		h.release <- struct{}{}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if h.maxActive > agent.MaxParallelCalls {
		t.Errorf("%d calls ran at once, want at most %d", h.maxActive, agent.MaxParallelCalls)
	}
	if res.Text != "all done" || len(res.Tools) != calls || !strings.HasPrefix(res.Tools[calls-1].Call.CallID, fmt.Sprintf("c%d", calls-1)) {
		t.Errorf("result: %q, %d tool runs", res.Text, len(res.Tools))
	}
}
