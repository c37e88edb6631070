package exposure_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/exposure"
)

// lateSource is a provider whose tool arrives when arrive is called, as a server's does when it
// connects.
type lateSource struct {
	mu      sync.Mutex
	entries []catalog.Entry
	notify  func()
}

func (s *lateSource) Tools() []catalog.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries
}

func (s *lateSource) arrive() {
	s.mu.Lock()
	s.entries = []catalog.Entry{{Tool: catalog.Tool{ID: "mcp:srv:echo", Name: "mcp__srv__echo", Source: catalog.SourceMCP, Server: "srv"},
		Exec: catalog.ExecutorFunc(func(_ context.Context, c catalog.Call) (*catalog.Result, error) {
			return catalog.TextResult("echo " + string(c.Args)), nil
		})}}
	s.mu.Unlock()
	s.notify()
}

// startingEngine is a direct-mode engine over a source that is still starting: Ready blocks until
// the source arrives (release) or its context ends, and counts its calls.
func startingEngine(t *testing.T, listWait time.Duration) (e *exposure.Engine, release func(), readies *atomic.Int32) {
	t.Helper()
	src := &lateSource{}
	cat := catalog.New(nil)
	src.notify = cat.Add(src)
	arrived := make(chan struct{})
	var once sync.Once
	readies = new(atomic.Int32)
	e = &exposure.Engine{Catalog: cat, Pipeline: &dispatch.Pipeline{}, ListWait: listWait,
		Ready: func(ctx context.Context) {
			readies.Add(1)
			select {
			case <-arrived:
			case <-ctx.Done():
			}
		}}
	return e, func() { once.Do(func() { src.arrive(); close(arrived) }) }, readies
}

func names(tools []catalog.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func TestFirstListWaitsForStartingSources(t *testing.T) {
	e, release, readies := startingEngine(t, time.Hour)
	ctx := t.Context()
	v, _ := e.Open(ctx, "a")
	done := make(chan struct{})
	go func() {
		v.WaitTools(ctx)
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("the first list did not wait for the starting source")
	case <-time.After(20 * time.Millisecond):
	}
	release()
	<-done
	if diff := cmp.Diff([]string{"mcp__srv__echo"}, names(v.Tools())); diff != "" {
		t.Errorf("tools after the wait (-want +got):\n%s", diff)
	}
	v.WaitTools(ctx) // the second list of a session never waits
	w, _ := e.Open(ctx, "b")
	w.WaitTools(ctx)
	if n := readies.Load(); n != 2 {
		t.Errorf("Ready ran %d times, want 2 (the first list of each session)", n)
	}
}

func TestFirstListWaitIsBounded(t *testing.T) {
	e, _, readies := startingEngine(t, 30*time.Millisecond)
	ctx := t.Context()
	v, _ := e.Open(ctx, "a")
	v.WaitTools(ctx) // returns at the list deadline though the source never arrives
	if got := v.Tools(); got != nil {
		t.Errorf("tools = %v, want none yet", got)
	}
	time.Sleep(40 * time.Millisecond)
	w, _ := e.Open(ctx, "b")
	w.WaitTools(ctx) // past the engine's list deadline: no wait at all
	if n := readies.Load(); n != 1 {
		t.Errorf("Ready ran %d times, want 1 (none after the deadline)", n)
	}
}

func TestFirstListDoesNotWaitInToolSearchModes(t *testing.T) {
	e, _, readies := startingEngine(t, time.Hour)
	e.SetMode(exposure.ToolSearchTools)
	v, _ := e.Open(t.Context(), "a")
	v.WaitTools(t.Context())
	if n := readies.Load(); n != 0 {
		t.Errorf("Ready ran %d times in a Tool Search mode, whose list does not depend on sources", n)
	}
}

// TestCallWaitsForAToolNotThereYet: a client that calls a server's tool right after initialize,
// before the server has connected, gets the tool's answer instead of "unknown tool".
func TestCallWaitsForAToolNotThereYet(t *testing.T) {
	e, release, _ := startingEngine(t, time.Hour)
	ctx := t.Context()
	v, _ := e.Open(ctx, "a")
	go func() {
		time.Sleep(20 * time.Millisecond)
		release()
	}()
	res, err := v.Call(ctx, "mcp__srv__echo", []byte(`{"a":1}`))
	if err != nil || res.Text() != `echo {"a":1}` {
		t.Fatalf("call = %v, %v", res, err)
	}
	// A name that never comes is still unknown once the sources are there.
	if _, err := v.Call(ctx, "nope", nil); !errors.Is(err, dispatch.ErrUnknownTool) {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestToolMeta(t *testing.T) {
	e, _, _ := startingEngine(t, time.Hour)
	v, _ := e.Open(t.Context(), "a")
	tool := &catalog.Tool{ID: "mcp:srv:echo", Server: "srv"}
	if m := v.ToolMeta(tool); m != nil {
		t.Errorf("meta without Engine.ToolMeta = %v", m)
	}
	e.ToolMeta = func(t *catalog.Tool) map[string]any { return map[string]any{"server": t.Server} }
	if diff := cmp.Diff(map[string]any{"server": "srv"}, v.ToolMeta(tool)); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
}
