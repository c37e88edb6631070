package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// fakeSessions is a core stand-in: every session starts with a few tools and can activate more,
// like discovery mode does.
type fakeSessions struct {
	mu      sync.Mutex
	opened  map[string]*fakeSession
	openErr error
}

func newFakeSessions() *fakeSessions { return &fakeSessions{opened: map[string]*fakeSession{}} }

func (f *fakeSessions) Open(_ context.Context, id string) (Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.openErr != nil {
		return nil, f.openErr
	}
	s := &fakeSession{id: id, subs: map[int]func(){}, tools: baseTools()}
	f.opened[id] = s
	return s, nil
}

func (f *fakeSessions) all() []*fakeSession {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*fakeSession
	for _, s := range f.opened {
		out = append(out, s)
	}
	return out
}

func baseTools() []catalog.Tool {
	return []catalog.Tool{
		{ID: "nodmix:core:echo", Name: "echo", Label: "Echo", Description: "Echoes the message.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)},
		{ID: "nodmix:core:activate", Name: "activate", Description: "Activates a tool by name.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
		{ID: "nodmix:core:rich", Name: "rich", Description: "Returns text, an image and structured content."},
		{ID: "nodmix:core:fail", Name: "fail", Description: "Fails."},
		{ID: "nodmix:core:slow", Name: "slow", Description: "Waits until cancelled."},
		{ID: "mcp:odd:schema", Name: "odd_schema", Description: "Has a schema without a type.",
			InputSchema: json.RawMessage(`{"properties":{"x":{"type":"number"}}}`)},
	}
}

type fakeSession struct {
	id     string
	closed atomic.Bool
	slowIn chan struct{} // closed when a slow call started, if set

	mu    sync.Mutex
	tools []catalog.Tool
	subs  map[int]func()
	next  int
}

func (s *fakeSession) Tools() []catalog.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

func (s *fakeSession) Subscribe(fn func()) func() {
	s.mu.Lock()
	id := s.next
	s.next++
	s.subs[id] = fn
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.subs, id)
		s.mu.Unlock()
	}
}

func (s *fakeSession) Close() error {
	if s.closed.Swap(true) {
		return errors.New("closed twice")
	}
	return nil
}

func (s *fakeSession) activate(name string) {
	s.mu.Lock()
	s.tools = append(s.tools, catalog.Tool{ID: "mcp:x:" + name, Name: name, Description: "Activated."})
	subs := make([]func(), 0, len(s.subs))
	for _, fn := range s.subs {
		subs = append(subs, fn)
	}
	s.mu.Unlock()
	for _, fn := range subs {
		fn() // from inside Call, as discovery does
	}
}

func (s *fakeSession) Call(ctx context.Context, name string, args json.RawMessage) (*catalog.Result, error) {
	var a struct {
		Message string `json:"message"`
		Name    string `json:"name"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("bad arguments: %w", err)
	}
	switch name {
	case "echo":
		return catalog.TextResult("echo: " + a.Message), nil
	case "activate":
		s.activate(a.Name)
		return catalog.TextResult("activated " + a.Name), nil
	case "rich":
		return &catalog.Result{
			Content: []catalog.Content{
				{Type: "text", Text: "a picture:"},
				{Type: "image", Raw: json.RawMessage(`{"type":"image","mimeType":"image/png","data":"UE5H"}`)},
			},
			Structured: json.RawMessage(`{"answer":42}`),
		}, nil
	case "fail":
		return catalog.ErrorResult("it failed"), nil
	case "slow":
		if s.slowIn != nil {
			close(s.slowIn)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	case "bogus":
		return &catalog.Result{Content: []catalog.Content{{Type: "x", Raw: json.RawMessage(`{"type":"nonsense"}`)}}}, nil
	case "hidden":
		return catalog.TextResult("callable although not listed"), nil
	}
	for _, t := range s.Tools() {
		if t.Name == name {
			return catalog.TextResult("I am " + name), nil
		}
	}
	return nil, fmt.Errorf("unknown tool: %s", name)
}

var _ Session = (*fakeSession)(nil)
var _ Sessions = (*fakeSessions)(nil)

// fakePassthrough stands in for the hub's prompts and resources.
type fakePassthrough struct {
	mu      sync.Mutex
	prompts []*mcp.Prompt
	subs    []func()
}

func newFakePassthrough() *fakePassthrough {
	return &fakePassthrough{prompts: []*mcp.Prompt{{Name: "srv__greet", Description: "Greets.", Arguments: []*mcp.PromptArgument{{Name: "who"}}}}}
}

func (p *fakePassthrough) Prompts() []*mcp.Prompt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.prompts)
}

func (p *fakePassthrough) GetPrompt(_ context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	if name != "srv__greet" {
		return nil, fmt.Errorf("unknown prompt %q", name)
	}
	return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + args["who"]}}}}, nil
}

func (p *fakePassthrough) Resources() []*mcp.Resource {
	return []*mcp.Resource{{URI: "demo://doc/1", Name: "doc1", MIMEType: "text/plain"}}
}

func (p *fakePassthrough) ResourceTemplates() []*mcp.ResourceTemplate {
	return []*mcp.ResourceTemplate{{URITemplate: "demo://item/{id}", Name: "item"}}
}

func (p *fakePassthrough) ReadResource(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "contents of " + uri}}}, nil
}

func (p *fakePassthrough) Subscribe(fn func()) func() {
	p.mu.Lock()
	p.subs = append(p.subs, fn)
	p.mu.Unlock()
	return func() {}
}

func (p *fakePassthrough) addPrompt(name string) {
	p.mu.Lock()
	p.prompts = append(p.prompts, &mcp.Prompt{Name: name})
	subs := slices.Clone(p.subs)
	p.mu.Unlock()
	for _, fn := range subs {
		fn()
	}
}

// waitUntil polls cond; for state outside any channel (a session closed by a server goroutine).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
