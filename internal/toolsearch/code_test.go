package toolsearch

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/policy"
	"github.com/nodmix/nodmix/internal/sandbox"
)

// TestMain lets the test binary serve as a sandbox child, so code mode runs in real children.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.ChildArg {
		os.Exit(sandbox.ChildMain(context.Background(), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// scriptRunner is a Runner that plays a script against the bridge instead of running code.
type scriptRunner struct {
	unavailable bool
	script      func(ctx context.Context, b sandbox.Bridge) (*sandbox.Result, error)
	lim         sandbox.Limits
}

func (s *scriptRunner) Run(ctx context.Context, _ string, b sandbox.Bridge, lim sandbox.Limits) (*sandbox.Result, error) {
	s.lim = lim
	return s.script(ctx, b)
}

func (s *scriptRunner) Available(context.Context) error {
	if s.unavailable {
		return sandbox.ErrUnavailable
	}
	return nil
}

func TestResolveMode(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		opts   Options
		runner Runner
		want   string
	}{
		{"code with a sandbox", Options{Mode: ModeCode}, &scriptRunner{}, ModeCode},
		{"default mode is code", Options{}, &scriptRunner{}, ModeCode},
		{"code falls back without a sandbox", Options{Mode: ModeCode}, &scriptRunner{unavailable: true}, ModeTools},
		{"code falls back without a runner", Options{Mode: ModeCode}, nil, ModeTools},
		{"tools stays tools", Options{Mode: ModeTools}, &scriptRunner{}, ModeTools},
	}
	for _, tt := range tests {
		if got := ResolveMode(ctx, tt.opts, tt.runner); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func codeFixture(t testing.TB, entries []catalog.Entry, pol dispatch.Policy, runner Runner, timeout time.Duration) *Runtime {
	t.Helper()
	snap, err := catalog.NewSnapshot(1, entries)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := NewIndex(snap, pol, newWordRanker)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(Config{Index: ix, Pipeline: &dispatch.Pipeline{Policy: pol}, Runner: runner, Options: Options{Mode: ModeCode, CodeTimeout: timeout}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestRunCodeBridge(t *testing.T) {
	var trace []string
	runner := &scriptRunner{script: func(ctx context.Context, b sandbox.Bridge) (*sandbox.Result, error) {
		hits, err := b.Search(ctx, "issue", 0)
		trace = append(trace, string(hits), errText(err))
		d, err := b.Describe(ctx, "issue_creat")
		trace = append(trace, string(d), errText(err))
		out, err := b.Call(ctx, "issue_create", json.RawMessage(`{"repository":"a/b","title":"x"}`))
		trace = append(trace, string(out), errText(err))
		return &sandbox.Result{Value: json.RawMessage(`{"done":true}`), Logs: []string{"one", "two 2"}}, nil
	}}
	rt := codeFixture(t, goldenEntries(), nil, runner, 2*time.Second)
	res, err := rt.RunCode(context.Background(), "return 1")
	if err != nil || res.IsError {
		t.Fatalf("RunCode: %v %+v", err, res)
	}
	if runner.lim.Timeout != 2*time.Second {
		t.Errorf("timeout passed to the sandbox = %v", runner.lim.Timeout)
	}
	wantTrace := []string{
		`[{"id":"nodmix:core:issue_create","source":"nodmix","sourceName":"core","name":"issue_create","label":"issue_create","description":"Open a new issue","input":"{ repository: string; title: string; mode?: \"drip\" | \"flood\" }"}]`, "<nil>",
		"", "Unknown tool id: issue_creat. Did you mean: issue_create? " + recoveryCode,
		`{"tool":{"id":"nodmix:core:issue_create","source":"nodmix","sourceName":"core","name":"issue_create","label":"issue_create","description":"Open a new issue","input":"{ repository: string; title: string; mode?: \"drip\" | \"flood\" }"},"result":{"content":[{"type":"text","text":"ok issue_create"}],"details":{"name":"issue_create","input":{"repository":"a/b","title":"x"}}}}`, "<nil>",
	}
	if diff := cmp.Diff(wantTrace, trace); diff != "" {
		t.Errorf("bridge (-want +got):\n%s", diff)
	}
	want := `{
  "ok": true,
  "value": {
    "done": true
  },
  "logs": [
    "one",
    "two 2"
  ],
  "telemetry": {
    "catalogSize": 6,
    "sources": {
      "nodmix": 6,
      "mcp": 0,
      "client": 0
    },
    "counterScope": "` + rt.scope + `",
    "searchCount": 1,
    "describeCount": 1,
    "callCount": 1
  }
}`
	if diff := cmp.Diff(want, res.Text()); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

func TestRunCodeFailures(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		runner  Runner
		code    string
		want    string
		wantErr bool
	}{
		{"blank code", &scriptRunner{}, "  \n", "code must be a non-empty string.", false},
		{"no runner", nil, "return 1", codeUnavailable, false},
		{"code error", &scriptRunner{script: func(context.Context, sandbox.Bridge) (*sandbox.Result, error) {
			return &sandbox.Result{}, &sandbox.CodeError{Kind: sandbox.KindThrown, Message: "Error: boom"}
		}}, "throw new Error('boom')", "Error: boom", false},
		{"sandbox gone", &scriptRunner{script: func(context.Context, sandbox.Bridge) (*sandbox.Result, error) {
			return nil, errors.Join(errors.New("start failed"), sandbox.ErrUnavailable)
		}}, "return 1", codeUnavailable, false},
		{"broken protocol", &scriptRunner{script: func(context.Context, sandbox.Bridge) (*sandbox.Result, error) {
			return nil, errors.New("sandbox: protocol violation")
		}}, "return 1", "", true},
	}
	for _, tt := range tests {
		rt := codeFixture(t, goldenEntries(), nil, tt.runner, 0)
		res, err := rt.RunCode(ctx, tt.code)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%s: no error", tt.name)
			}
			continue
		}
		if err != nil || !res.IsError || res.Text() != tt.want {
			t.Errorf("%s: %v, %q (error %v), want %q", tt.name, err, res.Text(), res.IsError, tt.want)
		}
	}
	// Through the control tool, a missing or non-string code is the same documented message.
	f := newFixture(t, goldenEntries(), nil, Options{})
	for _, args := range []string{`{}`, `{"code":5}`, `{"code":""}`} {
		if res := f.control(t, ToolSearchCode, args); !res.IsError || res.Text() != "code must be a non-empty string." {
			t.Errorf("%s: %q", args, res.Text())
		}
	}
}

func TestRunCodeMarksExternal(t *testing.T) {
	runner := &scriptRunner{script: func(ctx context.Context, b sandbox.Bridge) (*sandbox.Result, error) {
		_, _ = b.Search(ctx, "tracker", 0)
		return &sandbox.Result{}, nil
	}}
	rt := codeFixture(t, []catalog.Entry{mcpTool("gh", "tracker", "Issue tracker", "")}, nil, runner, 0)
	res, err := rt.RunCode(context.Background(), "x")
	if err != nil || !strings.HasPrefix(res.Text(), "<<<EXTERNAL_UNTRUSTED_CONTENT") || !strings.Contains(res.Text(), `"value": null`) {
		t.Fatalf("%v %q", err, res.Text())
	}
}

// newPool starts a pool of real sandbox children (this test binary).
func newPool(t testing.TB) *sandbox.Pool {
	t.Helper()
	p, err := sandbox.NewPool(sandbox.Options{Command: []string{os.Args[0], sandbox.ChildArg}, Warm: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	if err := p.Available(context.Background()); err != nil {
		t.Skipf("no sandbox child can start here: %v", err)
	}
	return p
}

var elapsedRE = regexp.MustCompile(` \(\d+ms\)$`)

// TestCodeGolden runs the reference's code-mode golden snippets in the real sandbox.
func TestCodeGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox children")
	}
	lines := goldenLines(t, codeGoldenFile)
	golden := func(name string) (want string, throws bool) {
		v := elapsedRE.ReplaceAllString(goldenValue(t, lines, name+" "), "")
		if rest, ok := strings.CutPrefix(v, "THROWS "); ok {
			return rest, true
		}
		return strings.TrimPrefix(v, "=> "), false
	}
	pool := newPool(t)
	entries := []catalog.Entry{builtin("issue_create", "Open a new issue",
		`{"type":"object","properties":{"repository":{"type":"string"},"title":{"type":"string"}},"required":["repository","title"],"additionalProperties":false}`)}
	snippets := []struct{ name, code string }{
		{"happy", `const hits = await nodmix.tools.search("issue");
console.log("n", hits.length);
try { await nodmix.tools.call(hits[0].id, { repositry: "a/b", title: "x" }); } catch (e) {}
try { await nodmix.tools.call(hits[0].id, { title: "x" }); } catch (e) {}
return (await nodmix.tools.call(hits[0].id, { repository: "a/b", title: "x" })).result.details;`},
		{"fs", `return [typeof require, typeof process, typeof fetch].join(" ");`},
		{"eval", `return eval("1 + 1");`},
		{"throw", `throw new Error("boom");`},
		{"empty", ``},
	}
	for _, s := range snippets {
		t.Run(s.name, func(t *testing.T) {
			rt := codeFixture(t, entries, nil, pool, 5*time.Second)
			want, throws := golden(s.name)
			if s.name == "fs" || s.name == "happy" {
				// Counters are per runtime: the fs line was recorded after happy on one catalog.
				if s.name == "fs" {
					rt.searches.Store(1)
					rt.calls.Store(3)
				}
				want = regexp.MustCompile(`"counterScope": "[0-9a-f]+"`).ReplaceAllString(want, `"counterScope": "`+rt.scope+`"`)
			}
			res, err := rt.RunCode(context.Background(), s.code)
			if err != nil {
				t.Fatal(err)
			}
			got := collapse(res.Text())
			if res.IsError != throws || got != want {
				t.Errorf("\n got %s (error %v)\nwant %s (error %v)", got, res.IsError, want, throws)
			}
		})
	}
}

// TestCodeDeadline: code that never finishes fails within the deadline, and nodmix goes on.
func TestCodeDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox children")
	}
	pool := newPool(t)
	for _, code := range []string{`while (true) {}`, `await new Promise(() => {}); return 1;`} {
		rt := codeFixture(t, goldenEntries(), nil, pool, time.Second)
		res, err := rt.RunCode(context.Background(), code)
		if err != nil {
			t.Fatal(err)
		}
		// The reference reports both as a timeout; nodmix's sandbox may see sooner that a
		// promise with nothing pending can never settle.
		if !res.IsError || (res.Text() != "tool_search_code timed out" && res.Text() != "tool_search_code promise never settled") {
			t.Errorf("%s: %q (error %v)", code, res.Text(), res.IsError)
		}
	}
	rt := codeFixture(t, goldenEntries(), nil, pool, time.Second)
	if res, err := rt.RunCode(context.Background(), `return 40 + 2`); err != nil || res.IsError || !strings.Contains(res.Text(), `"value": 42`) {
		t.Fatalf("sandbox unhealthy after deadlines: %v %q", err, res.Text())
	}
}

// TestCodeDeniedTool: a denied tool cannot be reached through the code bridge either.
func TestCodeDeniedTool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox children")
	}
	pool := newPool(t)
	rt := codeFixture(t, goldenEntries(), policy.Rules{Deny: []string{"nodmix:core:issue_*"}}, pool, 5*time.Second)
	res, err := rt.RunCode(context.Background(), `
const hits = await nodmix.tools.search("issue_create");
let msg = "";
try { await nodmix.tools.call("nodmix:core:issue_create", { repository: "a", title: "b" }); msg = "called"; }
catch (e) { msg = e.message; }
return { hits: hits.map(h => h.id), msg };`)
	if err != nil || res.IsError {
		t.Fatalf("%v %q", err, res.Text())
	}
	var out struct {
		Value struct {
			Hits []string `json:"hits"`
			Msg  string   `json:"msg"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(res.Text()), &out); err != nil {
		t.Fatal(err)
	}
	msg := out.Value.Msg
	if slices.Contains(out.Value.Hits, "nodmix:core:issue_create") || !strings.HasPrefix(msg, "Unknown tool id: nodmix:core:issue_create. ") ||
		!strings.HasSuffix(msg, recoveryCode) || strings.Contains(strings.TrimPrefix(msg, "Unknown tool id: nodmix:core:issue_create."), "issue_create") {
		t.Errorf("denied tool reached: %+v", out.Value)
	}
}

// TestCodeLongUnknownID: an unknown id made of many distinct words, which code builds in one
// line, gets its unknown-id message without the host spending time quadratic in the words (the
// host's time is not charged to the code's deadline).
func TestCodeLongUnknownID(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox children")
	}
	pool := newPool(t)
	const timeout = 10 * time.Second // building the id takes a while under -race
	rt := codeFixture(t, goldenEntries(), nil, pool, timeout)
	start := time.Now()
	res, err := rt.RunCode(context.Background(), `
const id = "issue " + Array.from({length: 100000}, (_, i) => "t" + i).join(" ");
try { await nodmix.tools.describe(id); } catch (e) {
  const head = "Unknown tool id: " + id;
  return [e.message.startsWith(head), e.message.slice(head.length)];
}`)
	if elapsed := time.Since(start); elapsed > 2*timeout {
		t.Errorf("RunCode took %v, deadline %v", elapsed, timeout)
	}
	if err != nil || res.IsError {
		t.Fatalf("%v %q", err, res.Text())
	}
	var out struct {
		Value []any `json:"value"`
	}
	if err := json.Unmarshal([]byte(res.Text()), &out); err != nil {
		t.Fatal(err)
	}
	want := []any{true, ". Did you mean: issue_create? " + recoveryCode}
	if diff := cmp.Diff(want, out.Value); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

// TestCodeResultText: the value reads as JSON.stringify(x, null, 2) writes it, so a URL or
// markup in a tool's result reaches the model as it is, not as \u0026 and \u003c escapes.
func TestCodeResultText(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox children")
	}
	pool := newPool(t)
	rt := codeFixture(t, goldenEntries(), nil, pool, 5*time.Second)
	res, err := rt.RunCode(context.Background(), `
const r = await nodmix.tools.call("issue_create", {repository: "a/b", title: "<b>x</b> & y"});
return r.result.details.input.title;`)
	if err != nil || res.IsError {
		t.Fatalf("%v %q", err, res.Text())
	}
	if want := `"value": "<b>x</b> & y",`; !strings.Contains(res.Text(), want) {
		t.Errorf("result text %s\nwant it to contain %s", res.Text(), want)
	}
}
