package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/benchtest"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/e2etest"
	"github.com/nodmix/nodmix/internal/leaktest"
	"github.com/nodmix/nodmix/internal/mcphub"
)

// clientRun is the output of client.mjs.
type clientRun struct {
	ProtocolVersion string          `json:"protocolVersion"`
	ServerInfo      map[string]any  `json:"serverInfo"`
	Capabilities    map[string]any  `json:"capabilities"`
	Results         []clientResult  `json:"results"`
	Error           string          `json:"error"`
	Raw             json.RawMessage `json:"-"`
}

type clientResult struct {
	Op    string `json:"op"`
	OK    bool   `json:"ok"`
	Tools []struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	} `json:"tools"`
	Prompts []struct {
		Name string `json:"name"`
	} `json:"prompts"`
	Result json.RawMessage `json:"result"`
	Count  int             `json:"count"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r clientResult) toolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// runClient runs client.mjs with the steps and returns what it printed.
func runClient(t *testing.T, dir string, steps string, args ...string) clientRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(dir, "client.mjs")}, args...)...)
	cmd.Stdin = strings.NewReader(steps)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var run clientRun
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		t.Fatalf("client.mjs output: %v\n%s", err, stdout.String())
	}
	run.Raw = stdout.Bytes()
	return run
}

const clientSteps = `[
  {"op":"tools"},
  {"op":"call","name":"echo","arguments":{"message":"from typescript"}},
  {"op":"call","name":"activate","arguments":{"name":"fresh"}},
  {"op":"waitToolsChanged","timeoutMs":20000},
  {"op":"tools"},
  {"op":"call","name":"fresh","arguments":{}},
  {"op":"call","name":"nope","arguments":{}},
  {"op":"request","method":"tools/call","params":{"name":"echo","arguments":[1,2]}},
  {"op":"call","name":"fail","arguments":{}},
  {"op":"prompts"},
  {"op":"getPrompt","name":"srv__greet","arguments":{"who":"ts"}},
  {"op":"read","uri":"demo://doc/1"}
]`

// checkClientRun asserts what every transport must give the TypeScript client for clientSteps.
func checkClientRun(t *testing.T, run clientRun) {
	t.Helper()
	if run.Error != "" || len(run.Results) != 12 {
		t.Fatalf("client run: %s", run.Raw)
	}
	if run.ServerInfo["name"] != "nodmix" {
		t.Errorf("server info %v", run.ServerInfo)
	}
	r := run.Results
	for i, res := range r {
		// Steps 6 and 7 are meant to fail.
		if res.OK == (i == 6 || i == 7) {
			t.Errorf("step %d (%s): ok=%v error=%+v", i, res.Op, res.OK, res.Error)
		}
	}
	if got := r[0].toolNames(); !slices.Contains(got, "echo") || slices.Contains(got, "fresh") {
		t.Errorf("first tools/list = %v", got)
	}
	if !strings.Contains(string(r[1].Result), `echo: from typescript`) {
		t.Errorf("echo = %s", r[1].Result)
	}
	if r[3].Count < 1 {
		t.Errorf("tools/list_changed count = %d", r[3].Count)
	}
	if got := r[4].toolNames(); !slices.Contains(got, "fresh") {
		t.Errorf("tools/list after activation = %v", got)
	}
	if !strings.Contains(string(r[5].Result), "I am fresh") {
		t.Errorf("activated tool = %s", r[5].Result)
	}
	if r[6].Error == nil || r[6].Error.Code != -32602 || !strings.Contains(r[6].Error.Message, "unknown tool: nope") {
		t.Errorf("unknown tool = %+v", r[6].Error)
	}
	if r[7].Error == nil || r[7].Error.Code != -32602 || !strings.Contains(r[7].Error.Message, `"arguments" must be a JSON object, not an array`) {
		t.Errorf("array arguments = %+v", r[7].Error)
	}
	if !strings.Contains(string(r[8].Result), `"isError":true`) {
		t.Errorf("failing tool = %s", r[8].Result)
	}
	if len(r[9].Prompts) != 1 || r[9].Prompts[0].Name != "srv__greet" || !strings.Contains(string(r[10].Result), "hello ts") {
		t.Errorf("prompts = %+v / %s", r[9].Prompts, r[10].Result)
	}
	if !strings.Contains(string(r[11].Result), "contents of demo://doc/1") {
		t.Errorf("resource = %s", r[11].Result)
	}
	for _, tool := range r[4].Tools {
		if tool.InputSchema["type"] != "object" {
			t.Errorf("tool %s schema %v: not an object schema", tool.Name, tool.InputSchema)
		}
	}
}

func TestE2ETypeScriptClientHTTP(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	sessions := newFakeSessions()
	pt := newFakePassthrough()
	srv := New(sessions, Options{Prompts: pt, Resources: pt})
	ts := httpServer(t, srv)
	run := runClient(t, dir, clientSteps, "--url", ts.URL+"/mcp")
	checkClientRun(t, run)
	if run.ProtocolVersion != "2025-11-25" {
		t.Errorf("protocol %q", run.ProtocolVersion)
	}
	waitUntil(t, "the client's session to be closed", func() bool {
		all := sessions.all()
		return len(all) == 1 && all[0].closed.Load()
	})
}

func TestE2ETypeScriptClientStdio(t *testing.T) {
	dir := e2etest.Dir(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary serves stdio itself (TestHelperStdioServer), as `nodmix mcp serve` will.
	t.Setenv("NODMIX_MCPSERVE_HELPER", "stdio")
	run := runClient(t, dir, clientSteps, "--stdio", exe, "-test.run=^TestHelperStdioServer$")
	checkClientRun(t, run)
}

// TestHelperStdioServer is not a test: run as a child process by TestE2ETypeScriptClientStdio, it
// serves fake sessions over its stdin and stdout.
func TestHelperStdioServer(t *testing.T) {
	if os.Getenv("NODMIX_MCPSERVE_HELPER") != "stdio" {
		t.Skip("helper process only")
	}
	pt := newFakePassthrough()
	srv := New(newFakeSessions(), Options{Prompts: pt, Resources: pt})
	// As `nodmix mcp serve` does: SIGTERM ends the serving.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err := srv.ServeStdio(ctx, os.Stdin, os.Stdout)
	_ = srv.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Exit before the test framework prints its summary to stdout, which is the MCP stream.
	os.Exit(0)
}

// hubSessions serves the hub's tools as they are (direct exposure without a core), and tells
// every session when the hub's tools change. A call finds its tool in an index by name, as the
// catalog's snapshot serves it: the index is rebuilt when the hub's tools change, not on every
// call (listing the hub's tools per call cost nine allocations a call, none of them nodmix's).
type hubSessions struct {
	hub    *mcphub.Hub
	mu     sync.Mutex
	fns    map[int]func()
	n      int
	byName map[string]*catalog.Entry // nil until the first call, and after a change
}

func newHubSessions() *hubSessions { return &hubSessions{fns: map[int]func(){}} }

// entry is the hub's tool named name.
func (h *hubSessions) entry(name string) (*catalog.Entry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byName == nil {
		entries := h.hub.Tools()
		h.byName = make(map[string]*catalog.Entry, len(entries))
		for i := range entries {
			h.byName[entries[i].Tool.Name] = &entries[i]
		}
	}
	e, ok := h.byName[name]
	return e, ok
}

// notify is the hub's Notify.
func (h *hubSessions) notify() {
	h.mu.Lock()
	h.byName = nil
	fns := make([]func(), 0, len(h.fns))
	for _, fn := range h.fns {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func (h *hubSessions) Open(context.Context, string) (Session, error) { return hubSession{h}, nil }

type hubSession struct{ *hubSessions }

func (h hubSession) Subscribe(fn func()) func() {
	h.mu.Lock()
	id := h.n
	h.n++
	h.fns[id] = fn
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.fns, id)
		h.mu.Unlock()
	}
}

func (h hubSession) Tools() []catalog.Tool {
	var out []catalog.Tool
	for _, e := range h.hub.Tools() {
		out = append(out, e.Tool)
	}
	return out
}

func (h hubSession) Call(ctx context.Context, name string, args json.RawMessage) (*catalog.Result, error) {
	e, ok := h.entry(name)
	if !ok {
		return nil, os.ErrNotExist
	}
	return e.Exec.Execute(ctx, catalog.Call{Tool: &e.Tool, Args: args})
}

func (hubSession) Close() error { return nil }

// TestE2EListChangedThroughNodmix follows a tool added by a real downstream server all the way to
// a TypeScript client: server list_changed → hub → session → nodmix's list_changed → client.
func TestE2EListChangedThroughNodmix(t *testing.T) {
	dir := e2etest.Dir(t)
	leaktest.Check(t)
	bridge := newHubSessions()
	hub := mcphub.New(mcphub.Options{
		Servers: []mcphub.ServerConfig{{Name: "fx", Command: "node", Args: []string{filepath.Join(dir, "fixture-server.mjs")}, Enabled: true}},
		Notify:  bridge.notify,
	})
	bridge.hub = hub
	if err := hub.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := hub.WaitState(ctx, "fx", mcphub.StateReady); err != nil {
		t.Fatal(err)
	}
	srv := New(bridge, Options{Prompts: hub, Resources: hub})
	ts := httpServer(t, srv)
	run := runClient(t, dir, `[
	  {"op":"tools"},
	  {"op":"call","name":"mcp__fx__add_tool","arguments":{"name":"brand_new"}},
	  {"op":"waitToolsChanged","timeoutMs":20000},
	  {"op":"tools"},
	  {"op":"call","name":"mcp__fx__brand_new","arguments":{}}
	]`, "--url", ts.URL+"/mcp")
	r := run.Results
	if len(r) != 5 || !r[2].OK || !r[4].OK {
		t.Fatalf("client run: %s", run.Raw)
	}
	if slices.Contains(r[0].toolNames(), "mcp__fx__brand_new") || !slices.Contains(r[3].toolNames(), "mcp__fx__brand_new") {
		t.Errorf("tools before %v, after %v", r[0].toolNames(), r[3].toolNames())
	}
	if !strings.Contains(string(r[4].Result), "I am brand_new") {
		t.Errorf("new tool = %s", r[4].Result)
	}
}

// BenchmarkProxyOverhead compares tools/call of server-everything's echo made directly with the
// Go SDK client against the same call through nodmix (an MCP client session to mcpserve over the
// stdio transport, which forwards through the hub), interleaved in one run so that both see the
// same machine load. It reports both latencies and their ratio, and the ratio of the same call
// through a relay that only copies bytes (relay-ratio), the floor of any hop in this process.
func BenchmarkProxyOverhead(b *testing.B) {
	dir := e2etest.Dir(b)
	everything := e2etest.Server(dir, "server-everything", "stdio")
	bridge := newHubSessions()
	hub := mcphub.New(mcphub.Options{
		Servers: []mcphub.ServerConfig{{Name: "everything", Command: everything[0], Args: everything[1:], Enabled: true}},
		Notify:  bridge.notify,
	})
	bridge.hub = hub
	if err := hub.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer hub.Close()
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	if err := hub.WaitState(ctx, "everything", mcphub.StateReady); err != nil {
		b.Fatal(err)
	}

	// nodmix's side as `nodmix mcp serve` runs it: the stdio line transport, here over pipes.
	srv := New(bridge, Options{})
	defer srv.Close()
	// OS pipes, as between a client and `nodmix mcp serve`: buffered, unlike io.Pipe.
	inR, inW, outR, outW := osPipes(b)
	defer inR.Close()
	defer outW.Close()
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(ctx, inR, outW) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	viaNodmix, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	direct, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(everything[0], everything[1:]...)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()

	// The floor of any MCP hop: the same SDK client calling a Go SDK server whose echo does
	// nothing, over OS pipes in this process. nodmix's extra hop cannot cost less than this.
	// (It is a little above the floor: against an SDK server the SDK client speaks 2026-07-28,
	// whose requests carry client info and capabilities in _meta that the server decodes on
	// every call; over 2025-11-25, which nodmix's stdio face negotiates, the hop takes about a
	// fifth less CPU.)
	bare := sdkEchoSession(b, ctx)
	// The floor of any hop: the same call to a second server-everything through a relay that
	// copies bytes and parses nothing.
	relayed := relaySession(b, ctx, everything, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})

	args := map[string]any{"message": "x"}
	callDirect := func() error {
		_, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		return err
	}
	callNodmix := func() error {
		_, err := viaNodmix.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__everything__echo", Arguments: args})
		return err
	}
	var tDirect, tNodmix, tBare, tRelay, cDirect, cNodmix time.Duration
	cStart := benchtest.CPUTime()
	for b.Loop() {
		t0, c0 := time.Now(), benchtest.CPUTime()
		if err := callDirect(); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), benchtest.CPUTime()
		if err := callNodmix(); err != nil {
			b.Fatal(err)
		}
		t2, c2 := time.Now(), benchtest.CPUTime()
		if _, err := bare.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if _, err := relayed.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
			b.Fatal(err)
		}
		tDirect += t1.Sub(t0)
		tNodmix += t2.Sub(t1)
		tBare += t3.Sub(t2)
		tRelay += time.Since(t3)
		cDirect += c1 - c0
		cNodmix += c2 - c1
	}
	cLoop := benchtest.CPUTime() - cStart
	// Allocations are counted after the timed loop, over b.N calls of one kind in a row. Counted
	// per call inside the loop they swung by a quarter between runs of the same code: the
	// runtime adds a small object to its counters only when the span it came from leaves a
	// thread's cache (when it is full, or at a GC), so a window was credited with whole spans
	// filled partly in other windows, the bare and relayed calls' among them. ReadMemStats
	// flushes those caches and so counts exactly what was allocated between two readings;
	// it stops the world, which is why it stays out of the timed calls. A block of calls of one
	// kind still counts all their work, what a call leaves running after its answer included
	// (it is counted with the next call), and the pools and buffers a GC in the block empties.
	aDirect := allocsPerCall(b, b.N, callDirect)
	aNodmix := allocsPerCall(b, b.N, callNodmix)
	b.ReportMetric(float64(cLoop)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(tDirect.Microseconds())/float64(b.N), "direct-µs/call")
	b.ReportMetric(float64(tNodmix.Microseconds())/float64(b.N), "nodmix-µs/call")
	b.ReportMetric(float64(tBare.Microseconds())/float64(b.N), "sdk-hop-µs/call")
	b.ReportMetric(float64(tNodmix)/float64(tDirect), "ratio")
	b.ReportMetric(float64(tRelay)/float64(tDirect), "relay-ratio")
	// This process's CPU time in each call: the client's alone for a direct call; the client's,
	// nodmix's stdio face's and the hub's through nodmix (the Node server's is not counted).
	// Steadier than the latencies on a loaded machine. Work that a call leaves to the garbage
	// collector may be counted in the call after it.
	b.ReportMetric(float64(cDirect.Microseconds())/float64(b.N), "direct-cpu-µs/call")
	b.ReportMetric(float64(cNodmix.Microseconds())/float64(b.N), "nodmix-cpu-µs/call")
	// What this process allocates per call (the SDK's decoder takes a 32 KiB buffer for every
	// value it decodes, four of them in a direct call).
	b.ReportMetric(aDirect.objects, "direct-allocs/call")
	b.ReportMetric(aNodmix.objects, "nodmix-allocs/call")
	b.ReportMetric(aDirect.bytes/1024, "direct-kB/call")
	b.ReportMetric(aNodmix.bytes/1024, "nodmix-kB/call")
	_ = viaNodmix.Close()
	<-served
}

// sdkEchoSession connects an SDK client to an SDK server over OS pipes; the server's echo
// tool returns its text at once. Both end with the benchmark.
func sdkEchoSession(b *testing.B, ctx context.Context) *mcp.ClientSession {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: x"}}}, nil
		})
	inR, inW, outR, outW := osPipes(b)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		_ = s.Run(ctx, &mcp.IOTransport{Reader: inR, Writer: outW})
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cs.Close()
		<-ran
	})
	return cs
}

// allocSum is what this process allocated on the heap per call, objects and bytes.
type allocSum struct{ objects, bytes float64 }

// allocsPerCall makes n calls in a row and returns what this process allocated per call.
// Unlike the runtime/metrics counters, runtime.ReadMemStats counts the small objects of spans
// still in a thread's cache, so the figure is exact for the interval, not for the spans the
// interval happened to finish; and it counts tiny objects too, as -benchmem does.
func allocsPerCall(b *testing.B, n int, call func() error) allocSum {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return allocSum{
		objects: float64(after.Mallocs-before.Mallocs) / float64(n),
		bytes:   float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
	}
}

// osPipes makes two OS pipes: a server reads inR and writes outW, its client the other ends.
func osPipes(b *testing.B) (inR, inW, outR, outW *os.File) {
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err = os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	return inR, inW, outR, outW
}
