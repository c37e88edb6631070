package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/leaktest"
)

// connectInMemory serves one session of srv over an in-memory pipe and connects a Go SDK client
// to it. The client's tools/list_changed notifications arrive on changed.
func connectInMemory(t *testing.T, srv *Server) (cs *mcp.ClientSession, changed chan string) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(t.Context(), st) }()
	changed = make(chan string, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:   func(context.Context, *mcp.ToolListChangedRequest) { changed <- "tools" },
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { changed <- "prompts" },
	})
	cs, err := c.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return cs, changed
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestServeInMemory(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{})
	t.Cleanup(func() { _ = srv.Close() })
	cs, changed := connectInMemory(t, srv)

	if got, want := cs.InitializeResult().ProtocolVersion, "2025-11-25"; got != want {
		t.Errorf("negotiated protocol %s, want %s (sessions need the session protocol)", got, want)
	}
	want := []string{"activate", "echo", "fail", "odd_schema", "rich", "slow"}
	if diff := cmp.Diff(want, toolNames(t, cs)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || textOf(res) != "echo: hi" {
		t.Fatalf("echo = %v, %v", res, err)
	}

	// Activation changes this session's tools: the client hears of it and lists the new tool.
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "activate", Arguments: map[string]any{"name": "fresh"}}); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, cs); !slices.Contains(got, "fresh") {
		t.Errorf("tools right after activation = %v, want fresh among them", got)
	}
	select {
	case what := <-changed:
		if what != "tools" {
			t.Errorf("notification %s", what)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/tools/list_changed after activation")
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fresh"})
	if err != nil || textOf(res) != "I am fresh" {
		t.Errorf("activated tool = %v, %v", res, err)
	}

	// The session decides what can be called, not the list.
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "hidden"})
	if err != nil || textOf(res) != "callable although not listed" {
		t.Errorf("hidden tool = %v, %v", res, err)
	}

	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "fail"})
	if err != nil || !res.IsError || textOf(res) != "it failed" {
		t.Errorf("failing tool = %+v, %v", res, err)
	}

	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "rich"})
	if err != nil {
		t.Fatal(err)
	}
	img, ok := res.Content[1].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || string(img.Data) != "PNG" {
		t.Errorf("image content = %#v", res.Content[1])
	}
	if got, _ := json.Marshal(res.StructuredContent); string(got) != `{"answer":42}` {
		t.Errorf("structured content = %s", got)
	}
}

func TestCallErrors(t *testing.T) {
	leaktest.Check(t)
	srv := New(newFakeSessions(), Options{})
	t.Cleanup(func() { _ = srv.Close() })
	cs, _ := connectInMemory(t, srv)

	tests := []struct {
		name string
		args any
		code int64
		msg  string
	}{
		{"nope", nil, jsonrpc.CodeInvalidParams, "unknown tool: nope"},
		{"echo", []int{1, 2}, jsonrpc.CodeInvalidParams, `tools/call "echo": "arguments" must be a JSON object, not an array`},
		{"echo", "text", jsonrpc.CodeInvalidParams, `tools/call "echo": "arguments" must be a JSON object, not a string`},
		{"echo", 7, jsonrpc.CodeInvalidParams, `tools/call "echo": "arguments" must be a JSON object, not a number`},
		{"", nil, jsonrpc.CodeInvalidParams, `tools/call: "name" is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.name, Arguments: tt.args})
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) {
				t.Fatalf("err = %v, want a JSON-RPC error", err)
			}
			if wire.Code != tt.code || wire.Message != tt.msg {
				t.Errorf("error = %d %q, want %d %q", wire.Code, wire.Message, tt.code, tt.msg)
			}
		})
	}
	// The session survives all of that.
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "ok"}}); err != nil || textOf(res) != "echo: ok" {
		t.Errorf("echo after errors = %v, %v", res, err)
	}
}

func TestCancelReachesSession(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{})
	t.Cleanup(func() { _ = srv.Close() })
	cs, _ := connectInMemory(t, srv)
	fs := sessions.all()[0]
	fs.slowIn = make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		errc <- err
	}()
	<-fs.slowIn
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
}

func TestSessionLifecycle(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{SessionID: "fixed"})
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(t.Context(), st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
	all := sessions.all()
	if len(all) != 1 || all[0].id != "fixed" || !all[0].closed.Load() {
		t.Fatalf("sessions after the client left: %+v", all)
	}
	_ = srv.Close()
	if err := srv.Serve(t.Context(), st); !errors.Is(err, ErrClosed) {
		t.Errorf("Serve after Close = %v", err)
	}

	sessions.openErr = errors.New("store unavailable")
	srv2 := New(sessions, Options{})
	defer srv2.Close()
	st2, _ := mcp.NewInMemoryTransports()
	if err := srv2.Serve(t.Context(), st2); err == nil || !strings.Contains(err.Error(), "opening session: store unavailable") {
		t.Errorf("Serve with a failing Open = %v", err)
	}
}

func TestServerCloseEndsServe(t *testing.T) {
	leaktest.Check(t)
	srv := New(newFakeSessions(), Options{})
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(t.Context(), st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_ = srv.Close()
	if err := <-served; err != nil {
		t.Errorf("Serve after Close = %v", err)
	}
}

func TestPassthrough(t *testing.T) {
	leaktest.Check(t)
	pt := newFakePassthrough()
	srv := New(newFakeSessions(), Options{Prompts: pt, Resources: pt})
	t.Cleanup(func() { _ = srv.Close() })
	cs, changed := connectInMemory(t, srv)

	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "srv__greet" {
		t.Fatalf("prompts = %+v, %v", prompts, err)
	}
	pr, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "srv__greet", Arguments: map[string]string{"who": "you"}})
	if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != "hello you" {
		t.Fatalf("GetPrompt = %+v, %v", pr, err)
	}
	for _, uri := range []string{"demo://doc/1", "demo://item/7"} {
		rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || rr.Contents[0].Text != "contents of "+uri {
			t.Errorf("ReadResource(%s) = %+v, %v", uri, rr, err)
		}
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "demo://nothing"}); err == nil {
		t.Error("reading an unknown resource succeeded")
	}

	pt.addPrompt("srv__later")
	for what := range changed {
		if what == "prompts" {
			break
		}
	}
	prompts, err = cs.ListPrompts(t.Context(), nil)
	if err != nil || len(prompts.Prompts) != 2 {
		t.Errorf("prompts after a change = %+v, %v", prompts, err)
	}
}

func TestObjectArgs(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{``, `{}`, ""},
		{`null`, `{}`, ""},
		{` {"a":1} `, `{"a":1}`, ""},
		{`[1]`, ``, `"arguments" must be a JSON object, not an array`},
		{`"s"`, ``, `"arguments" must be a JSON object, not a string`},
		{`true`, ``, `"arguments" must be a JSON object, not a boolean`},
		{`1.5`, ``, `"arguments" must be a JSON object, not a number`},
		{`{"a":`, ``, `"arguments" is not valid JSON`},
	}
	for _, tt := range tests {
		got, err := objectArgs(json.RawMessage(tt.in))
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("objectArgs(%s) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("objectArgs(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestObjectSchema(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{`{"properties":{"a":{}}}`, `{"properties":{"a":{}},"type":"object"}`},
		{`{"type":"string"}`, `{"type":"object"}`},
		{`[1]`, `{"type":"object"}`},
		{`not json`, `{"type":"object"}`},
		{`null`, `{"type":"object"}`},
	}
	for _, tt := range tests {
		if got := objectSchema(json.RawMessage(tt.in)); string(got) != tt.want {
			t.Errorf("objectSchema(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestToCallResult(t *testing.T) {
	got, err := toCallResult(&catalog.Result{
		Content: []catalog.Content{
			{Type: "text", Text: "one"},
			{Type: "resource_link", Raw: json.RawMessage(`{"type":"resource_link","uri":"file:///x","name":"x"}`)},
			{Type: "text", Text: "two"},
		},
		IsError: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	wire, _ := json.Marshal(got)
	want := `{"content":[{"type":"text","text":"one"},{"type":"resource_link","uri":"file:///x","name":"x"},{"type":"text","text":"two"}],"isError":true}`
	if string(wire) != want {
		t.Errorf("wire form\n got %s\nwant %s", wire, want)
	}
	if _, err := toCallResult(&catalog.Result{Content: []catalog.Content{{Type: "x", Raw: json.RawMessage(`{"type":"nonsense"}`)}}}); err == nil {
		t.Error("unknown content type accepted")
	}
	if r, err := toCallResult(nil); err != nil || r.Content == nil {
		t.Errorf("nil result = %+v, %v", r, err)
	}
}

// Every form of a catalog result reads on the wire as its parts, in order.
func TestToCallResultWire(t *testing.T) {
	image := json.RawMessage(`{"type":"image","data":"AA==","mimeType":"image/png"}`)
	tests := []struct {
		name string
		in   *catalog.Result
		want string // "" for an error
	}{
		{"one text", &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "Echo: x"}}},
			`{"content":[{"type":"text","text":"Echo: x"}]}`},
		{"one text, failed, structured", &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "no"}}, IsError: true, Structured: json.RawMessage(`{"a":1}`)},
			`{"content":[{"type":"text","text":"no"}],"structuredContent":{"a":1},"isError":true}`},
		{"no parts", &catalog.Result{},
			`{"content":[]}`},
		{"one raw part", &catalog.Result{Content: []catalog.Content{{Type: "image", Raw: image}}},
			`{"content":[{"type":"image","mimeType":"image/png","data":"AA=="}]}`},
		{"raw between texts", &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "a"}, {Type: "image", Raw: image}, {Type: "text", Text: "b"}, {Type: "image", Raw: image}}},
			`{"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"AA=="},{"type":"text","text":"b"},{"type":"image","mimeType":"image/png","data":"AA=="}]}`},
		{"a part that is two", &catalog.Result{Content: []catalog.Content{{Type: "text", Raw: json.RawMessage(`{"type":"text","text":"a"},{"type":"text","text":"b"}`)}, {Type: "text", Text: "c"}}},
			""},
		{"parts that splice into others", &catalog.Result{Content: []catalog.Content{{Type: "text", Raw: json.RawMessage(`{"type":"text","text":"a"},{"type":"text"`)}, {Type: "text", Raw: json.RawMessage(`"text":"b"}`)}}},
			""},
		{"a part that is not JSON", &catalog.Result{Content: []catalog.Content{{Type: "text", Raw: json.RawMessage(`{`)}}},
			""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toCallResult(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("toCallResult = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wire, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(wire)); diff != "" {
				t.Errorf("wire form (-want +got):\n%s", diff)
			}
		})
	}
}

// A result of one text part, what most tools answer, is converted in one allocation.
func TestToCallResultAllocations(t *testing.T) {
	in := &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "Echo: x"}}}
	n := testing.AllocsPerRun(100, func() {
		if _, err := toCallResult(in); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Errorf("toCallResult of one text part allocates %v objects, want at most 1", n)
	}
}
