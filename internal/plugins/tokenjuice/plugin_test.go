package tokenjuice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/plugin"
)

func startPlugin(t testing.TB, config string) *Plugin {
	t.Helper()
	var raw json.RawMessage
	if config != "" {
		raw = json.RawMessage(config)
	}
	p, err := plugin.Start(context.Background(), Factory, raw, plugin.Host{})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Plugin)
}

var execTool = &catalog.Tool{ID: "nodmix:core:exec", Name: "exec", Source: catalog.SourceBuiltin, Owner: "core"}
var bashTool = &catalog.Tool{ID: "nodmix:core:bash", Name: "bash", Source: catalog.SourceBuiltin, Owner: "core"}

// execResult builds a result the way internal/builtin/exec does (see its package doc).
func execResult(command string, exit int, output string) *catalog.Result {
	st, _ := json.Marshal(map[string]any{
		"command": command, "exit_code": exit, "timed_out": false, "truncated": false,
		"output_bytes": len(output), "duration_ms": 12, "output": output,
	})
	return &catalog.Result{
		Content:    []catalog.Content{{Type: "text", Text: output}, {Type: "text", Text: "[exit code " + strconv.Itoa(exit) + " | 0.01s]"}},
		Structured: st,
	}
}

func noisyLog() string {
	var b strings.Builder
	for i := range 500 {
		b.WriteString("step " + strconv.Itoa(i) + ": compiled module ok\n")
	}
	b.WriteString("error: linker failed: undefined symbol main.run\n")
	return b.String()
}

func TestMiddlewareCompactsExecAndBash(t *testing.T) {
	p := startPlugin(t, "")
	mw := p.Middleware()
	in := execResult("make all", 2, noisyLog())
	got, err := mw.Process(context.Background(), catalog.Call{Tool: bashTool, Session: "s1"}, in)
	if err != nil {
		t.Fatal(err)
	}
	if got == in {
		t.Fatal("a noisy output passed through")
	}
	if !strings.Contains(got.Content[0].Text, "error: linker failed: undefined symbol main.run") {
		t.Error("the error line was dropped")
	}
	if diff := cmp.Diff(in.Content[1], got.Content[1]); diff != "" {
		t.Errorf("status line changed:\n%s", diff)
	}
	var st map[string]any
	if err := json.Unmarshal(got.Structured, &st); err != nil {
		t.Fatal(err)
	}
	if st["exit_code"] != float64(2) || st["command"] != "make all" || st["output"] != got.Content[0].Text {
		t.Errorf("structured content: exit_code=%v command=%v output matches text=%v", st["exit_code"], st["command"], st["output"] == got.Content[0].Text)
	}
	tj, _ := st["tokenjuice"].(map[string]any)
	handle, _ := tj["handle"].(string)
	if tj["compacted"] != true || !strings.HasPrefix(handle, "tj_") || !strings.Contains(got.Content[0].Text, handle) {
		t.Fatalf("tokenjuice metadata %v, marker must name the handle", tj)
	}
	// The original result was not modified in place.
	if in.Content[0].Text != noisyLog() {
		t.Error("the input result was modified")
	}

	// tokenjuice_raw returns the full output.
	raw := p.Tools()[0]
	res, err := raw.Exec.Execute(context.Background(), catalog.Call{Tool: &raw.Tool, Args: json.RawMessage(`{"handle":"` + handle + `"}`)})
	if err != nil || res.IsError || res.Text() != noisyLog() {
		t.Fatalf("tokenjuice_raw: err=%v isError=%v text ok=%v", err, res.IsError, res.Text() == noisyLog())
	}
}

func TestMiddlewarePassesOthersThrough(t *testing.T) {
	p := startPlugin(t, "")
	mw := p.Middleware()
	noisy := noisyLog()
	mcpExec := &catalog.Tool{ID: "mcp:shell:exec", Name: "exec", Source: catalog.SourceMCP}
	other := &catalog.Tool{ID: "nodmix:core:web_search", Name: "web_search", Source: catalog.SourceBuiltin}
	tests := []struct {
		name string
		tool *catalog.Tool
		res  *catalog.Result
	}{
		{"another tool", other, execResult("make", 0, noisy)},
		{"exec from an MCP server", mcpExec, execResult("make", 0, noisy)},
		{"no structured content", execTool, catalog.TextResult(noisy)},
		{"content does not match the contract", execTool, func() *catalog.Result {
			r := execResult("make", 0, noisy)
			r.Content[0].Text = "something else"
			return r
		}()},
		{"small output", execTool, execResult("git status", 0, "On branch main\nnothing to commit, working tree clean\n")},
		{"exact file read", bashTool, execResult("cat main.go", 0, noisy)},
		{"nil result", execTool, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mw.Process(context.Background(), catalog.Call{Tool: tt.tool}, tt.res)
			if err != nil || got != tt.res {
				t.Errorf("got %p (err %v), want the same result %p", got, err, tt.res)
			}
		})
	}
}

type failingStore struct{}

func (failingStore) Put(context.Context, string, string, []byte) error {
	return errors.New("disk full")
}
func (failingStore) Get(context.Context, string) ([]byte, error) { return nil, ErrNotFound }

func TestMiddlewareWithoutAStoreStillCompacts(t *testing.T) {
	p := New()
	p.UseStore(failingStore{})
	if err := p.Decode(nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Init(context.Background(), plugin.Host{}); err != nil {
		t.Fatal(err)
	}
	got, _ := p.Middleware().Process(context.Background(), catalog.Call{Tool: execTool}, execResult("make", 0, noisyLog()))
	text := got.Content[0].Text
	if strings.Contains(text, "tj_") || !strings.HasSuffix(text, "chars]") {
		t.Errorf("marker must not name a handle that was not stored: %q", text[len(text)-80:])
	}
}

func TestRuleFailureFailsOpen(t *testing.T) {
	boom := &rule{id: "test/boom", family: "test", match: func(*command, *simple) bool { return true },
		reduce: func(*doc) (string, bool) { panic("rule bug") }}
	saved := rules
	rules = append([]*rule{boom}, rules...)
	defer func() { rules = saved }()

	out := Compact(Input{Command: "anything", Output: []byte(noisyLog())})
	if !out.Raw || out.Text != noisyLog() || out.Err == nil || out.Reason != ReasonRuleError {
		t.Fatalf("raw=%v reason=%s err=%v", out.Raw, out.Reason, out.Err)
	}
	p := startPlugin(t, "")
	in := execResult("anything", 0, noisyLog())
	got, err := p.Middleware().Process(context.Background(), catalog.Call{Tool: execTool}, in)
	if err != nil || got != in {
		t.Errorf("the middleware must pass the raw result through, got err=%v", err)
	}
}

func TestRawToolPagesAndErrors(t *testing.T) {
	p := startPlugin(t, `{"maxRawBytes": 1000}`)
	data := strings.Repeat("é", 300) // 600 bytes of 2-byte runes
	if err := p.store.Put(context.Background(), "s", "tj_aaaaaaaaaaaa", []byte(data)); err != nil {
		t.Fatal(err)
	}
	tool := p.Tools()[0]
	call := func(args string) *catalog.Result {
		res, err := tool.Exec.Execute(context.Background(), catalog.Call{Tool: &tool.Tool, Args: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	page := call(`{"handle":"tj_aaaaaaaaaaaa","offset":1,"limit":101}`)
	var meta map[string]any
	_ = json.Unmarshal(page.Structured, &meta)
	if meta["offset"] != float64(2) || meta["next_offset"] != float64(102) || !strings.HasPrefix(page.Text(), strings.Repeat("é", 50)+"\n[tokenjuice_raw: bytes 2-102 of 600;") {
		t.Errorf("page: %v %q", meta, page.Text()[:40])
	}
	tests := []struct{ args, want string }{
		{`{"handle":"tj_bbbbbbbbbbbb"}`, `No output is stored under handle "tj_bbbbbbbbbbbb"`},
		{`{}`, `Invalid arguments: handle: required`},
		{`{"handle":"tj_aaaaaaaaaaaa","limit":0}`, `Invalid arguments: limit: must be between 1 and 1048576`},
		{`{"handle":"tj_aaaaaaaaaaaa","offset":-1}`, `Invalid arguments: offset: must be at least 0`},
		{`{"handle":"tj_aaaaaaaaaaaa","extra":1}`, `Invalid arguments: unknown field "extra"`},
	}
	for _, tt := range tests {
		res := call(tt.args)
		if !res.IsError || !strings.HasPrefix(res.Text(), tt.want) {
			t.Errorf("%s: %q, want prefix %q", tt.args, res.Text(), tt.want)
		}
	}
}

func TestDecodeConfig(t *testing.T) {
	tests := []struct {
		config, err string
	}{
		{``, ""},
		{`null`, ""},
		{`{}`, ""},
		{`{"maxRawBytes": 1048576, "minSavings": 0.3, "minSavedChars": 50}`, ""},
		{`{"maxRawBytes": 0}`, "maxRawBytes: must be a positive integer (bytes)"},
		{`{"minSavings": 1}`, "minSavings: must be a number between 0 and 1 (exclusive)"},
		{`{"minSavedChars": "x"}`, "minSavedChars: must be a non-negative integer"},
		{`{"maxRawByte": 1}`, "maxRawByte: unknown field (allowed: maxRawBytes, minSavings, minSavedChars)"},
		{`[]`, "(root): must be an object"},
	}
	for _, tt := range tests {
		err := New().Decode(json.RawMessage(tt.config))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.err {
			t.Errorf("Decode(%s) = %q, want %q", tt.config, got, tt.err)
		}
	}
}

func TestMemStoreEvictsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	m := NewMemStore(10)
	put := func(h string, n int) {
		if err := m.Put(ctx, "s", h, []byte(strings.Repeat("x", n))); err != nil {
			t.Fatal(err)
		}
	}
	put("a", 4)
	put("b", 4)
	if _, err := m.Get(ctx, "a"); err != nil { // a is now the most recent
		t.Fatal(err)
	}
	put("c", 4) // evicts b
	if _, err := m.Get(ctx, "b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("b should have been evicted, got %v", err)
	}
	for _, h := range []string{"a", "c"} {
		if _, err := m.Get(ctx, h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	if m.Size() != 8 {
		t.Errorf("size = %d", m.Size())
	}
	if err := m.Put(ctx, "s", "big", make([]byte, 11)); err == nil {
		t.Error("an output larger than the store was accepted")
	}
}

// TestCorpusThroughMiddleware runs the corpus through the middleware as exec results: exit codes
// and status lines are unchanged, facts survive, exact reads are untouched.
func TestCorpusThroughMiddleware(t *testing.T) {
	p := startPlugin(t, "")
	mw := p.Middleware()
	for _, c := range loadCorpus(t) {
		in := execResult(c.cmd, c.exit, string(c.raw))
		got, err := mw.Process(context.Background(), catalog.Call{Tool: bashTool}, in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var st struct {
			ExitCode int    `json:"exit_code"`
			Output   string `json:"output"`
		}
		if err := json.Unmarshal(got.Structured, &st); err != nil {
			t.Fatal(err)
		}
		if st.ExitCode != c.exit || got.Content[1].Text != in.Content[1].Text || got.IsError != in.IsError {
			t.Errorf("%s: exit code, status line or error flag changed", c.name)
		}
		if c.expectRaw && got != in {
			t.Errorf("%s: an exact read was rewritten", c.name)
		}
		for _, f := range c.facts {
			if !strings.Contains(got.Content[0].Text, f) {
				t.Errorf("%s: fact lost: %q", c.name, f)
			}
		}
	}
}

// A limit smaller than the character at the offset still moves forward: the page holds that whole
// character, so that a caller following next_offset is never sent back to where it was.
func TestRawToolPageSmallerThanACharacter(t *testing.T) {
	p := startPlugin(t, "")
	data := "a€b" // € is 3 bytes: offsets 1-3
	if err := p.store.Put(context.Background(), "s", "tj_cccccccccccc", []byte(data)); err != nil {
		t.Fatal(err)
	}
	tool := p.Tools()[0]
	var got []string
	for offset := 0; offset < len(data) && len(got) < 10; {
		args := fmt.Sprintf(`{"handle":"tj_cccccccccccc","offset":%d,"limit":1}`, offset)
		res, err := tool.Exec.Execute(context.Background(), catalog.Call{Tool: &tool.Tool, Args: json.RawMessage(args)})
		if err != nil || res.IsError {
			t.Fatalf("offset %d: %v %s", offset, err, res.Text())
		}
		var meta struct {
			Bytes      int  `json:"bytes"`
			NextOffset *int `json:"next_offset"`
		}
		if err := json.Unmarshal(res.Structured, &meta); err != nil {
			t.Fatal(err)
		}
		text, _, _ := strings.Cut(res.Text(), "\n[tokenjuice_raw:")
		got = append(got, text)
		if meta.NextOffset == nil {
			break
		}
		if *meta.NextOffset <= offset {
			t.Fatalf("offset %d: next_offset %d does not move forward (page %q)", offset, *meta.NextOffset, text)
		}
		offset = *meta.NextOffset
	}
	if d := cmp.Diff([]string{"a", "€", "b"}, got); d != "" {
		t.Errorf("pages (-want +got):\n%s", d)
	}
	// An offset inside the character starts after it.
	res, err := tool.Exec.Execute(context.Background(), catalog.Call{Tool: &tool.Tool, Args: json.RawMessage(`{"handle":"tj_cccccccccccc","offset":2,"limit":1}`)})
	if err != nil || res.IsError || res.Text() != "b" {
		t.Errorf("offset inside a character: %v %q, want %q", err, res.Text(), "b")
	}
}
