package mcphub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/leaktest"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  ServerConfig
		want string // substring of the error; empty means valid
	}{
		{"stdio", ServerConfig{Name: "fs", Command: "node", Args: []string{"x"}, Env: map[string]string{"A": "b"}}, ""},
		{"http", ServerConfig{Name: "web-1", URL: "https://example.com/mcp", Headers: map[string]string{"X": "y"}}, ""},
		{"neither", ServerConfig{Name: "x"}, "mcp.servers.x: one of command or url is required"},
		{"both", ServerConfig{Name: "x", Command: "a", URL: "http://h/mcp"}, "mcp.servers.x: command and url are mutually exclusive"},
		{"empty name", ServerConfig{Command: "a"}, "mcp.servers: a server name must not be empty"},
		{"colon in name", ServerConfig{Name: "a:b", Command: "a"}, "mcp.servers.a:b: server name must match"},
		{"dot in name", ServerConfig{Name: "web.1", Command: "a"}, "mcp.servers.web.1: server name must match"},
		{"dash first", ServerConfig{Name: "-x", Command: "a"}, "mcp.servers.-x: server name must match"},
		{"bad scheme", ServerConfig{Name: "x", URL: "ftp://h/"}, "mcp.servers.x.url: must be an http or https URL"},
		{"no host", ServerConfig{Name: "x", URL: "http:///mcp"}, "mcp.servers.x.url: must name a host"},
		{"args on url", ServerConfig{Name: "x", URL: "http://h/", Args: []string{"a"}}, "args, env and cwd apply to command servers only"},
		{"headers on command", ServerConfig{Name: "x", Command: "a", Headers: map[string]string{"a": "b"}}, "mcp.servers.x.headers: headers apply to url servers only"},
		{"negative timeout", ServerConfig{Name: "x", Command: "a", Timeout: -1}, "mcp.servers.x.timeoutMs: must not be negative"},
		{"negative connect timeout", ServerConfig{Name: "x", Command: "a", ConnectTimeout: -1}, "mcp.servers.x.connectTimeoutMs: must not be negative"},
		{"inheritEnv on url", ServerConfig{Name: "x", URL: "http://h/", InheritEnv: true}, "mcp.servers.x.inheritEnv: applies to command servers only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate() = %v, want an ErrInvalidConfig containing %q", err, tt.want)
			}
		})
	}
}

func TestNewReportsBadConfigsWithoutStartingThem(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	f.servers["good"] = newTestServer("good", nil)
	h, _ := testHub(t, f, Options{},
		enabled("good"),
		ServerConfig{Name: "nothing", Enabled: true},
		ServerConfig{Name: "off", Command: "x"},
		ServerConfig{Name: "good", Command: "dup", Enabled: true},
	)
	waitState(t, h, "good", StateReady)
	got := map[string]State{}
	for _, s := range h.Status() {
		if s.Name != "good" || s.State != StateReady {
			got[s.Name+"/"+s.LastError] = s.State
		}
	}
	want := map[string]State{
		"good/invalid mcp server config: mcp.servers.good: duplicate server name":                   StateInvalid,
		"nothing/invalid mcp server config: mcp.servers.nothing: one of command or url is required": StateInvalid,
		"off/": StateDisabled,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if n := f.dialCount("nothing") + f.dialCount("off"); n != 0 {
		t.Errorf("bad or disabled servers were dialled %d times", n)
	}
}

func TestToolsAggregateAllPages(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	// A page size of 2 makes the hub follow cursors.
	f.servers["alpha"] = newTestServer("alpha", &mcp.ServerOptions{PageSize: 2}, "a1", "a2", "a3", "a4")
	f.servers["beta"] = newTestServer("beta", nil, "b.dotted")
	h, notified := testHub(t, f, Options{}, enabled("alpha"), enabled("beta"))
	waitState(t, h, "alpha", StateReady)
	waitState(t, h, "beta", StateReady)
	waitFor(t, h, "one Notify per server", func() bool { return notified.Load() >= 2 })

	type row struct{ ID, Name, Label, Owner, Server, MCP, Schema string }
	var got []row
	for _, e := range h.Tools() {
		tl := e.Tool
		if tl.Source != catalog.SourceMCP || tl.LoadMode != catalog.Discoverable {
			t.Errorf("%s: source %s, load mode %s", tl.ID, tl.Source, tl.LoadMode)
		}
		got = append(got, row{tl.ID, tl.Name, tl.Label, tl.Owner, tl.Server, tl.MCPToolName, strings.Join(tl.SchemaKeys(), ",")})
	}
	want := []row{
		{"mcp:alpha:a1", "mcp__alpha__a1", "", "alpha", "alpha", "a1", ""},
		{"mcp:alpha:a2", "mcp__alpha__a2", "", "alpha", "alpha", "a2", ""},
		{"mcp:alpha:a3", "mcp__alpha__a3", "", "alpha", "alpha", "a3", ""},
		{"mcp:alpha:a4", "mcp__alpha__a4", "", "alpha", "alpha", "a4", ""},
		{"mcp:alpha:echo", "mcp__alpha__echo", "Echo", "alpha", "alpha", "echo", "message"},
		{"mcp:beta:b.dotted", catalog.SafeName("mcp__beta__b.dotted", "mcp:beta:b.dotted"), "", "beta", "beta", "b.dotted", ""},
		{"mcp:beta:echo", "mcp__beta__echo", "Echo", "beta", "beta", "echo", "message"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if _, err := catalog.NewSnapshot(1, h.Tools()); err != nil {
		t.Errorf("the hub's tools do not make a valid snapshot: %v", err)
	}
	if s := statusOf(h, "alpha"); s.Tools != 5 || s.Transport != "stdio" || s.LastError != "" {
		t.Errorf("status of alpha = %+v", s)
	}
}

func callByID(t *testing.T, h *Hub, id string, args string) (*catalog.Result, error) {
	t.Helper()
	return callByIDCtx(t.Context(), t, h, id, args)
}

func callByIDCtx(ctx context.Context, t *testing.T, h *Hub, id string, args string) (*catalog.Result, error) {
	t.Helper()
	for _, e := range h.Tools() {
		if e.Tool.ID == id {
			return e.Exec.Execute(ctx, catalog.Call{Tool: &e.Tool, Args: json.RawMessage(args)})
		}
	}
	t.Fatalf("no tool %s in %v", id, h.Tools())
	return nil, nil
}

func TestCallResults(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	s := newTestServer("srv", nil)
	s.AddTool(&mcp.Tool{Name: "rich", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content: []mcp.Content{
					&mcp.TextContent{Text: "plain"},
					&mcp.ImageContent{Data: []byte("PNG"), MIMEType: "image/png"},
				},
				StructuredContent: map[string]any{"n": 1},
			}, nil
		})
	s.AddTool(&mcp.Tool{Name: "broken", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("disk on fire")
		})
	f.servers["srv"] = s
	h, _ := testHub(t, f, Options{}, enabled("srv"))
	waitState(t, h, "srv", StateReady)

	tests := []struct {
		name, id, args string
		want           *catalog.Result
	}{
		{"echo", "mcp:srv:echo", `{"message":"hi"}`, catalog.TextResult("srv: hi")},
		{"empty args", "mcp:srv:echo", ``, catalog.TextResult("srv: ")},
		{"rich", "mcp:srv:rich", `{}`, &catalog.Result{
			Content: []catalog.Content{
				{Type: "text", Text: "plain"},
				{Type: "image", Raw: json.RawMessage(`{"type":"image","mimeType":"image/png","data":"UE5H"}`)},
			},
			Structured: json.RawMessage(`{"n":1}`),
		}},
		{"tool error", "mcp:srv:broken", `{}`, &catalog.Result{IsError: true, Content: []catalog.Content{{Type: "text", Text: `mcp server "srv" refused the call to tool "broken": disk on fire`}}}},
		{"schema refusal", "mcp:srv:echo", `{"message":42}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := callByID(t, h, tt.id, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if !got.IsError || !strings.Contains(got.Text(), "validating") {
					t.Fatalf("got %+v, want a failed result about validation", got)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownToolIsRefusedByServer(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	f.servers["srv"] = newTestServer("srv", nil)
	h, _ := testHub(t, f, Options{}, enabled("srv"))
	waitState(t, h, "srv", StateReady)
	d, _ := h.server("srv")
	res, err := d.callTool(t.Context(), "nope", nil)
	if err != nil {
		t.Fatalf("callTool: %v", err)
	}
	if want := `mcp server "srv" refused the call to tool "nope": unknown tool "nope"`; !res.IsError || res.Text() != want {
		t.Errorf("got %q (isError %v), want %q", res.Text(), res.IsError, want)
	}
}

func TestListChangedRefreshesAndNotifies(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	s := newTestServer("srv", nil)
	f.servers["srv"] = s
	h, notified := testHub(t, f, Options{}, enabled("srv"))
	waitState(t, h, "srv", StateReady)
	waitFor(t, h, "the first Notify", func() bool { return notified.Load() >= 1 })
	before := notified.Load()

	addPlainTool(s, "late")
	waitFor(t, h, "the new tool", func() bool { return len(h.Tools()) == 2 })
	// Notify follows the tools' installation on the server's goroutine: the tools can be
	// seen a moment before it runs, so wait for it rather than expect it already.
	waitFor(t, h, "Notify after list_changed", func() bool { return notified.Load() > before })
	if res, err := callByID(t, h, "mcp:srv:late", `{}`); err != nil || res.Text() != "late" {
		t.Errorf("call of the new tool = %v, %v", res, err)
	}

	s.RemoveTools("late")
	waitFor(t, h, "the tool to go", func() bool { return len(h.Tools()) == 1 })
}

func TestCancelReachesServer(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	s := newTestServer("srv", nil)
	started := make(chan struct{})
	cancelled := make(chan struct{})
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		})
	f.servers["srv"] = s
	h, _ := testHub(t, f, Options{}, enabled("srv"))
	waitState(t, h, "srv", StateReady)

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := callByIDCtx(ctx, t, h, "mcp:srv:block", `{}`)
		errc <- err
	}()
	<-started
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), `mcp server "srv": call to tool "block" cancelled`) {
		t.Fatalf("err = %v, want a cancellation naming the server and tool", err)
	}
	<-cancelled // the server saw notifications/cancelled; the test hangs (and times out) otherwise
	if res, err := callByID(t, h, "mcp:srv:echo", `{"message":"still here"}`); err != nil || res.Text() != "srv: still here" {
		t.Errorf("call after cancel = %v, %v", res, err)
	}
}

func TestPerServerTimeout(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	s := newTestServer("srv", nil)
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	f.servers["srv"] = s
	cfg := enabled("srv")
	cfg.Timeout = 50 * time.Millisecond
	h, _ := testHub(t, f, Options{}, cfg)
	waitState(t, h, "srv", StateReady)
	_, err := callByID(t, h, "mcp:srv:block", `{}`)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `call to tool "block" timed out after 50ms`) {
		t.Fatalf("err = %v, want a timeout naming the tool and the limit", err)
	}
}

func TestRestartAfterDeath(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	f.servers["srv"] = newTestServer("srv", nil)
	// A long backoff keeps the server down long enough to observe it.
	h, notified := testHub(t, f, Options{Backoff: Backoff{Initial: time.Hour, StableAfter: time.Hour}}, enabled("srv"))
	waitState(t, h, "srv", StateReady)
	waitFor(t, h, "the first Notify", func() bool { return notified.Load() >= 1 })
	n := notified.Load()

	f.kill("srv")
	waitState(t, h, "srv", StateDown)
	_, err := callByID(t, h, "mcp:srv:echo", `{"message":"x"}`)
	var ue *UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, catalog.ErrUnavailable) {
		t.Fatalf("call while down: %v, want an UnavailableError", err)
	}
	if ue.Server != "srv" || ue.State != StateDown || ue.RetryIn <= 0 ||
		!strings.HasPrefix(err.Error(), `mcp server "srv": down (restarting in 1h0m0s): connection closed`) {
		t.Errorf("error = %q (%+v)", err, ue)
	}
	if len(h.Tools()) != 1 {
		t.Errorf("a down server keeps its tools; have %d", len(h.Tools()))
	}
	if notified.Load() != n {
		t.Error("Notify was called although the tools did not change")
	}
	st := statusOf(h, "srv")
	if st.State != StateDown || st.Restarts != 1 || st.RetryInMs <= 0 || !strings.Contains(st.LastError, "connection closed") {
		t.Errorf("status = %+v", st)
	}
}

func TestRestartComesBack(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	f.servers["srv"] = newTestServer("srv", nil)
	h, _ := testHub(t, f, Options{}, enabled("srv"))
	waitState(t, h, "srv", StateReady)
	f.kill("srv")
	waitFor(t, h, "a second connection", func() bool { return f.dialCount("srv") >= 2 && statusOf(h, "srv").State == StateReady })
	if res, err := callByID(t, h, "mcp:srv:echo", `{"message":"back"}`); err != nil || res.Text() != "srv: back" {
		t.Fatalf("call after restart = %v, %v", res, err)
	}
}

func TestBackoffGrowsAndResets(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: 4 * time.Second}.withDefaults()
	if b.StableAfter != 60*time.Second {
		t.Errorf("default StableAfter = %v", b.StableAfter)
	}
	if got := (Backoff{Initial: time.Minute, Max: time.Second}).withDefaults(); got.Max != time.Minute {
		t.Errorf("Max below Initial is raised to it; got %v", got.Max)
	}
}

func TestSilentServerDoesNotDelayOthers(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	f.silent["stuck"] = true
	f.servers["fine"] = newTestServer("fine", nil)
	h, _ := testHub(t, f, Options{ConnectTimeout: time.Hour}, enabled("stuck"), enabled("fine"))
	waitState(t, h, "fine", StateReady)
	if st := statusOf(h, "stuck"); st.State != StateConnecting {
		t.Fatalf("stuck server state = %s, want connecting", st.State)
	}
	_, err := callByID(t, h, "mcp:fine:echo", `{"message":"ok"}`)
	if err != nil {
		t.Fatal(err)
	}
	// A call to a server that is still connecting waits for it, within the caller's deadline.
	d, _ := h.server("stuck")
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = d.callTool(ctx, "x", nil)
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() != `mcp server "stuck": waiting for it to connect: context deadline exceeded` {
		t.Errorf("call to a connecting server: %v", err)
	}
}

func TestSilentServerTimesOut(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	f.silent["stuck"] = true
	h, _ := testHub(t, f, Options{ConnectTimeout: 50 * time.Millisecond, Backoff: Backoff{Initial: time.Hour}}, enabled("stuck"))
	waitState(t, h, "stuck", StateDown)
	if st := statusOf(h, "stuck"); st.LastError != "no answer to initialize within 50ms" {
		t.Errorf("last error = %q", st.LastError)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := h.Settled(ctx); err != nil {
		t.Errorf("Settled: %v", err)
	}
}

func TestGarbageMarksDown(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	f.garbage["junk"] = true
	f.servers["fine"] = newTestServer("fine", nil)
	h, _ := testHub(t, f, Options{Backoff: Backoff{Initial: time.Hour}}, enabled("junk"), enabled("fine"))
	waitState(t, h, "junk", StateDown)
	waitState(t, h, "fine", StateReady)
	if st := statusOf(h, "junk"); !strings.Contains(st.LastError, "invalid character") {
		t.Errorf("last error = %q, want the decoding error", st.LastError)
	}
}

func TestStartTwiceAndAfterClose(t *testing.T) {
	h := New(Options{})
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := h.Start(t.Context()); !errors.Is(err, ErrStarted) {
		t.Errorf("second Start = %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := New(Options{}).Close(); err != nil {
		t.Errorf("Close before Start = %v", err)
	}
	h2 := New(Options{})
	_ = h2.Close()
	if err := h2.Start(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close = %v", err)
	}
}

func TestUnavailableErrorText(t *testing.T) {
	tests := []struct {
		err  *UnavailableError
		want string
	}{
		{&UnavailableError{Server: "x", State: StateDown, RetryIn: 2 * time.Second, Err: errors.New("EOF")}, `mcp server "x": down (restarting in 2s): EOF`},
		{&UnavailableError{Server: "x", State: StateDown, RetryIn: 1500 * time.Millisecond, Err: errors.New("EOF")}, `mcp server "x": down (restarting in 2s): EOF`},
		{&UnavailableError{Server: "x", State: StateDown, RetryIn: 250 * time.Millisecond}, `mcp server "x": down (restarting in 250ms)`},
		{&UnavailableError{Server: "x", State: StateConnecting}, `mcp server "x": connecting`},
		{&UnavailableError{Server: "x", State: StateDisabled}, `mcp server "x": disabled`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.err, catalog.ErrUnavailable) {
			t.Errorf("%q does not match catalog.ErrUnavailable", tt.err)
		}
	}
}

// The end of the context Start was given ends the connections, as its comment says; the servers
// stayed "ready" (handing out their closed sessions, a call failing as if the server were being
// restarted) or "connecting" (holding whoever waited for them) until Close.
func TestStartContextEndClosesServers(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	f.servers["up"] = newTestServer("up", nil)
	f.gate["slow"] = make(chan struct{}) // never opened: connecting until the end
	h := New(Options{Servers: []ServerConfig{enabled("up"), enabled("slow")}, Log: testLogger(t)})
	h.dial = f.dial
	ctx, cancel := context.WithCancel(t.Context())
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	waitState(t, h, "up", StateReady)
	cancel()
	waitState(t, h, "up", StateClosed)
	waitState(t, h, "slow", StateClosed)
	wait, stop := context.WithTimeout(t.Context(), 30*time.Second)
	defer stop()
	if err := h.Settled(wait); err != nil {
		t.Errorf("Settled after the end: %v", err)
	}
	_, err := callByID(t, h, "mcp:up:echo", `{}`)
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.State != StateClosed {
		t.Errorf("call after the end = %v, want the server closed", err)
	}
}
