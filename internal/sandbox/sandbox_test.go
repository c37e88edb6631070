package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const goldenFile = "../../testdata/reference/golden/toolsearch-code-golden.txt"

// goldenCase is one line of the reference's code-mode golden output: either a result envelope
// ("name => {…} (Nms)") or a failure ("name THROWS message (Nms)").
type goldenCase struct {
	ok     bool
	value  json.RawMessage
	logs   []string
	throws string
}

func readGolden(t *testing.T) map[string]goldenCase {
	t.Helper()
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatalf("open golden: %v", err)
	}
	defer f.Close()
	re := regexp.MustCompile(`^([a-z-]+) (=>|THROWS) (.*) \(\d+ms\)$`)
	cases := map[string]goldenCase{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if m[2] == "THROWS" {
			cases[m[1]] = goldenCase{throws: m[3]}
			continue
		}
		var env struct {
			OK    bool            `json:"ok"`
			Value json.RawMessage `json:"value"`
			Logs  []string        `json:"logs"`
		}
		if err := json.Unmarshal([]byte(m[3]), &env); err != nil {
			t.Fatalf("golden %s: %v", m[1], err)
		}
		cases[m[1]] = goldenCase{ok: env.OK, value: env.Value, logs: env.Logs}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read golden: %v", err)
	}
	return cases
}

// TestGolden replays the reference's code-mode cases against real children. The reference
// printed results, not the code, so the code is reconstructed from what each case shows.
func TestGolden(t *testing.T) {
	golden := readGolden(t)
	codes := map[string]string{
		"happy": `const hits = await nodmix.tools.search("create an issue");
console.log("n", hits.length);
return await nodmix.tools.call(hits[0].id, { repository: "a/b", title: "x" });`,
		"fs":         `return [typeof require, typeof process, typeof fetch].join(" ");`,
		"eval":       `return eval("1");`,
		"infinite":   `while (true) {}`,
		"async-hang": `await new Promise(() => {});`,
		"throw":      `throw new Error("boom");`,
		"empty":      "  \n\t",
	}
	// nodmix detects a promise that can no longer settle (no bridge call is pending and the
	// runtime has no timers) at once, instead of waiting for the deadline as the reference does.
	deviations := map[string]string{"async-hang": msgNeverSettled}

	p := newTestPool(t, 2)
	lim := Limits{Timeout: 1500 * time.Millisecond}
	for name, code := range codes {
		want, ok := golden[name]
		if !ok {
			t.Fatalf("golden file has no case %q", name)
		}
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			res, err := p.Run(context.Background(), code, &fakeBridge{}, lim)
			if elapsed := time.Since(start); elapsed > lim.Timeout+slack {
				t.Errorf("took %v, deadline %v", elapsed, lim.Timeout)
			}
			if want.throws != "" {
				msg := want.throws
				if d, ok := deviations[name]; ok {
					msg = d
				}
				if got := codeError(t, err).Message; got != msg {
					t.Errorf("error = %q, want %q", got, msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var got, wantV any
			_ = json.Unmarshal(res.Value, &got)
			_ = json.Unmarshal(want.value, &wantV)
			if diff := cmp.Diff(wantV, got); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.logs, res.Logs, cmpEmptyNil); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmptyNil = cmp.Transformer("nilToEmpty", func(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
})

func TestRunValuesAndLogs(t *testing.T) {
	p := newTestPool(t, 2)
	tests := []struct {
		name  string
		code  string
		value string
		logs  []string
	}{
		{"no return", `1 + 1;`, `null`, nil},
		{"undefined", `return undefined;`, `null`, nil},
		{"number", `return 6 * 7;`, `42`, nil},
		{"string", `return "héllo";`, `"héllo"`, nil},
		{"HTML characters as JSON.stringify writes them", `return {url: "https://x.test/?a=1&b=<2>"};`, `{"url":"https://x.test/?a=1&b=<2>"}`, nil},
		{"object", `return {a: [1, {b: null}], c: "d"};`, `{"a":[1,{"b":null}],"c":"d"}`, nil},
		{"NaN", `return NaN;`, `null`, nil},
		{"function", `return function () {};`, `null`, nil},
		{"toJSON", `return {toJSON() { return "custom"; }};`, `"custom"`, nil},
		{"await chain", `const a = await Promise.resolve(1); const b = await (async () => a + 1)(); return b;`, `2`, nil},
		{"console formats", `console.log("a", 1, {b: 2}, [1, "x"], null, undefined, true);
console.warn("w"); console.error(new TypeError("bad"), () => 1); return 0;`, `0`,
			[]string{`a 1 {"b":2} [1,"x"] null undefined true`, "w", "TypeError: bad [Function]"}},
		{"globals tampering does not change output", `JSON.stringify = () => "hacked"; String = null;
console.log({a: 1}); return {b: 2};`, `{"b":2}`, []string{`{"a":1}`}},
		{"closing the wrapper", `return 1; }); (async function () { return 2;`, `2`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustRun(t, p, tc.code, &fakeBridge{})
			if diff := cmp.Diff(tc.value, string(res.Value)); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.logs, res.Logs, cmpEmptyNil); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLogsTruncated(t *testing.T) {
	p := newTestPool(t, 1)
	lim := testLimits()
	lim.MaxLogBytes = 100
	res, err := p.Run(context.Background(), `for (let i = 0; i < 1000; i++) console.log("line " + i); return "done";`, &fakeBridge{}, lim)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.LogsTruncated {
		t.Error("LogsTruncated = false, want true")
	}
	total := 0
	for _, l := range res.Logs {
		total += len(l) + 1
	}
	if total > lim.MaxLogBytes || len(res.Logs) == 0 || res.Logs[0] != "line 0" {
		t.Errorf("logs = %q (%d bytes), want a prefix of the output within %d bytes", res.Logs, total, lim.MaxLogBytes)
	}
	if string(res.Value) != `"done"` {
		t.Errorf("value = %s, want \"done\"", res.Value)
	}
}

func TestBridge(t *testing.T) {
	p := newTestPool(t, 2)
	tests := []struct {
		name  string
		code  string
		setup func(*fakeBridge)
		value string
		check func(t *testing.T, b *fakeBridge)
	}{
		{name: "search limit is passed", code: `await nodmix.tools.search("x", {limit: 3}); return 1;`, value: `1`,
			check: func(t *testing.T, b *fakeBridge) {
				if b.lastLimit != 3 {
					t.Errorf("limit = %d, want 3", b.lastLimit)
				}
			}},
		{name: "non-numeric limit means default", code: `await nodmix.tools.search("x", {limit: "3"}); return 1;`, value: `1`,
			check: func(t *testing.T, b *fakeBridge) {
				if b.lastLimit != 0 {
					t.Errorf("limit = %d, want 0", b.lastLimit)
				}
			}},
		{name: "describe", code: `const d = await nodmix.tools.describe("` + testToolID + `"); return d.input;`,
			value: `{"repository":"string","title":"string"}`},
		{name: "search query must be a string", code: `try { await nodmix.tools.search(5); } catch (e) { return e.message; }`,
			value: `"search query must be a string."`},
		{name: "describe id must be a string", code: `try { await nodmix.tools.describe({}); } catch (e) { return e.message; }`,
			value: `"describe id must be a string."`},
		{name: "call id must be a string", code: `try { await nodmix.tools.call(1, {}); } catch (e) { return e.message; }`,
			value: `"call id must be a string."`},
		{name: "undefined args cross as null", code: `await nodmix.tools.call("` + testToolID + `"); return 1;`, value: `1`,
			check: func(t *testing.T, b *fakeBridge) {
				if b.lastArgs != "null" {
					t.Errorf("args = %s, want null", b.lastArgs)
				}
			}},
		{name: "args keep HTML characters", code: `await nodmix.tools.call("` + testToolID + `", {title: "<b> & c"}); return 1;`, value: `1`,
			check: func(t *testing.T, b *fakeBridge) {
				if want := `{"title":"<b> & c"}`; b.lastArgs != want {
					t.Errorf("args = %s, want %s", b.lastArgs, want)
				}
			}},
		{name: "circular args reject", code: `const a = {}; a.a = a;
try { await nodmix.tools.call("x", a); } catch (e) { return e.name; }`, value: `"TypeError"`},
		{name: "host error rejects", code: `try { await nodmix.tools.call("nope", {}); } catch (e) { return e.message; }`,
			value: `"Unknown tool id: nope."`},
		{name: "invalid JSON from host", setup: func(b *fakeBridge) {
			b.onCall = func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{not json`), nil
			}
		}, code: `try { await nodmix.tools.call("x", {}); } catch (e) { return e.message; }`, value: `"` + msgBridgeBadJSON + `"`},
		{name: "nil from host is null", setup: func(b *fakeBridge) {
			b.onCall = func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return nil, nil }
		}, code: `return await nodmix.tools.call("x", {});`, value: `null`},
		{name: "panicking host fails the call only", setup: func(b *fakeBridge) {
			b.onCall = func(context.Context, string, json.RawMessage) (json.RawMessage, error) { panic("host bug") }
		}, code: `try { await nodmix.tools.call("x", {}); } catch (e) { return e.message; }`, value: `"` + msgBridgePanic + `"`},
		{name: "calls run concurrently", setup: func(b *fakeBridge) {
			var arrived atomic.Int64
			all := make(chan struct{})
			b.onCall = func(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
				if arrived.Add(1) == 4 {
					close(all)
				}
				select { // each call waits for all four: only concurrent calls can finish
				case <-all:
					return args, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}, code: `return await Promise.all([1, 2, 3, 4].map(i => nodmix.tools.call("t", i)));`, value: `[1,2,3,4]`},
		{name: "fire and forget calls still complete", code: `nodmix.tools.call("` + testToolID + `", {late: true}); return "early";`,
			value: `"early"`, check: func(t *testing.T, b *fakeBridge) {
				if b.calls.Load() != 1 {
					t.Errorf("calls = %d, want 1", b.calls.Load())
				}
			}},
		{name: "bridge object is frozen", code: `nodmix.tools.search = null; nodmix = null; console.log = null;
return [typeof nodmix.tools.search, Object.isFrozen(nodmix.tools), Object.isFrozen(console)];`, value: `["function",true,true]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBridge{}
			if tc.setup != nil {
				tc.setup(b)
			}
			res := mustRun(t, p, tc.code, b)
			if diff := cmp.Diff(tc.value, string(res.Value)); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, b)
			}
		})
	}
}

// TestHostWaitNotCharged: time the child spends idle waiting on the host does not count
// against the deadline (improvements §6.5), while the same wait in the code itself would.
func TestHostWaitNotCharged(t *testing.T) {
	p := newTestPool(t, 1)
	b := &fakeBridge{onCall: func(ctx context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
		select {
		case <-time.After(1200 * time.Millisecond):
			return args, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	lim := testLimits()
	lim.Timeout = 400 * time.Millisecond
	res, err := p.Run(context.Background(), `return await nodmix.tools.call("slow", 1);`, b, lim)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if string(res.Value) != "1" || res.HostWait <= 0 || res.BridgeCalls != 1 {
		t.Errorf("result = %+v, want value 1, HostWait > 0, 1 bridge call", res)
	}
}

func TestAbort(t *testing.T) {
	p := newTestPool(t, 1)
	t.Run("while code runs", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		b := &fakeBridge{onCall: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			cancel() // the code is now spinning; abort it from the host
			return json.RawMessage("1"), nil
		}}
		_, err := p.Run(ctx, `nodmix.tools.call("x", 1); while (true) {}`, b, Limits{Timeout: time.Minute})
		ce := codeError(t, err)
		if ce.Kind != KindAborted || ce.Message != msgAborted || !errors.Is(err, context.Canceled) {
			t.Errorf("error = %+v, want %q wrapping context.Canceled", ce, msgAborted)
		}
	})
	t.Run("while the host blocks", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		var sawCancel atomic.Bool
		b := &fakeBridge{onCall: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
			<-ctx.Done()
			sawCancel.Store(true)
			return nil, ctx.Err()
		}}
		_, err := p.Run(ctx, `return await nodmix.tools.call("x", 1);`, b, Limits{Timeout: time.Minute})
		if ce := codeError(t, err); ce.Kind != KindAborted || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error = %+v, want aborted wrapping DeadlineExceeded", ce)
		}
		if !sawCancel.Load() {
			t.Error("the bridge call's context was not cancelled before Run returned")
		}
	})
	if res := mustRun(t, p, `return "healthy";`, &fakeBridge{}); string(res.Value) != `"healthy"` {
		t.Errorf("run after aborts = %s", res.Value)
	}
}

func TestWarmAndCold(t *testing.T) {
	warm := newTestPool(t, 1)
	if err := warm.Available(context.Background()); err != nil {
		t.Fatalf("Available: %v", err)
	}
	if res := mustRun(t, warm, `return 1;`, &fakeBridge{}); !res.Warm {
		t.Error("run after Available was not served by a warm child")
	}
	cold := newTestPool(t, -1)
	if err := cold.Available(context.Background()); err != nil {
		t.Fatalf("Available: %v", err)
	}
	if res := mustRun(t, cold, `return 1;`, &fakeBridge{}); res.Warm {
		t.Error("pool without warm children served a warm run")
	}
}

func TestUnavailable(t *testing.T) {
	tests := []struct {
		name    string
		command []string
		want    string
	}{
		{"missing binary", []string{"/nonexistent/nodmix", ChildArg}, "no such file"},
		{"binary without the child entry point", []string{os.Args[0], ChildArg, "silent"},
			msgChildExitPrefix + "0: not a sandbox child"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPool(Options{Command: tc.command, Warm: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			err = p.Available(context.Background())
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Available = %v, want ErrUnavailable containing %q", err, tc.want)
			}
			_, err = p.Run(context.Background(), `return 1;`, &fakeBridge{}, Limits{})
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("Run = %v, want ErrUnavailable", err)
			}
		})
	}
}

func TestChildFailures(t *testing.T) {
	t.Run("crash reports exit code and stderr tail", func(t *testing.T) {
		p := newTestPool(t, -1, "crash")
		_, err := p.Run(context.Background(), `return 1;`, &fakeBridge{}, testLimits())
		ce := codeError(t, err)
		want := regexp.MustCompile(`^tool_search_code child exited with 3: x+\n` + crashLast +
			` \[\d+ bytes over the 64 KiB stderr cap discarded; \d+ more bytes not shown\]$`)
		if ce.Kind != KindChildExited || !want.MatchString(ce.Message) {
			t.Errorf("error = %q (%s), want match of %s", ce.Message, ce.Kind, want)
		}
		preview := strings.TrimPrefix(ce.Message, msgChildExitPrefix+"3: ")
		if preview = preview[:strings.LastIndex(preview, " [")]; len(preview) != stderrPreview {
			t.Errorf("preview has %d bytes, want the last %d", len(preview), stderrPreview)
		}
	})
	t.Run("protocol violation is an infrastructure error", func(t *testing.T) {
		p := newTestPool(t, -1, "garbage")
		_, err := p.Run(context.Background(), `return 1;`, &fakeBridge{}, testLimits())
		var ce *CodeError
		if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), "read from child") {
			t.Errorf("error = %v, want a non-code protocol error", err)
		}
	})
}

func TestClose(t *testing.T) {
	p := newTestPool(t, 1)
	started := make(chan struct{})
	b := &fakeBridge{onCall: func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	errc := make(chan error, 1)
	go func() {
		_, err := p.Run(context.Background(), `return await nodmix.tools.call("x", 1);`, b, Limits{Timeout: time.Minute})
		errc <- err
	}()
	<-started
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("run in progress = %v, want ErrClosed", err)
	}
	if _, err := p.Run(context.Background(), `return 1;`, b, Limits{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close = %v, want ErrClosed", err)
	}
	if err := p.Available(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Available after Close = %v, want ErrClosed", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestValidation(t *testing.T) {
	if _, err := NewPool(Options{}); err == nil || !strings.Contains(err.Error(), "Options.Command") {
		t.Errorf("NewPool without command = %v, want an Options.Command error", err)
	}
	if _, err := NewPool(Options{Command: []string{"x"}, StartTimeout: -1}); err == nil || !strings.Contains(err.Error(), "Options.StartTimeout") {
		t.Errorf("NewPool with negative timeout = %v", err)
	}
	if _, err := NewPool(Options{Command: []string{"x"}, MaxRunning: -1}); err == nil || !strings.Contains(err.Error(), "Options.MaxRunning: must not be negative") {
		t.Errorf("NewPool with a negative MaxRunning = %v", err)
	}
	p := newTestPool(t, -1)
	for _, tc := range []struct {
		lim  Limits
		want string
	}{
		{Limits{Timeout: -1}, "Limits.Timeout: must not be negative"},
		{Limits{MemoryBytes: -1}, "Limits.MemoryBytes: must not be negative"},
		{Limits{MaxLogBytes: -1}, "Limits.MaxLogBytes: must not be negative"},
		{Limits{MaxResultBytes: -1}, "Limits.MaxResultBytes: must not be negative"},
		{Limits{MaxBridgeCalls: -1}, "Limits.MaxBridgeCalls: must not be negative"},
	} {
		if _, err := p.Run(context.Background(), `return 1;`, &fakeBridge{}, tc.lim); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v) = %v, want %q", tc.lim, err, tc.want)
		}
	}
	if _, err := p.Run(context.Background(), `return 1;`, nil, Limits{}); err == nil {
		t.Error("Run with nil bridge succeeded")
	}
	_, err := p.Run(context.Background(), strings.Repeat(" ", MaxCodeBytes)+"x", &fakeBridge{}, Limits{})
	if ce := codeError(t, err); ce.Kind != KindInvalid {
		t.Errorf("oversized code: %+v", ce)
	}
}

func TestSelfCommand(t *testing.T) {
	got, err := SelfCommand()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if diff := cmp.Diff([]string{exe, ChildArg}, got); diff != "" {
		t.Errorf("SelfCommand (-want +got):\n%s", diff)
	}
}

// TestDispatchBridge covers the host-side checks, which a well-behaved child never trips.
func TestDispatchBridge(t *testing.T) {
	tests := []struct {
		method, args string
		want         string // value, or error text
	}{
		{methodSearch, `{"query":"q","limit":-3}`, `[{"id":"` + testToolID + `","name":"issue_create","source":"nodmix"}]`},
		{methodSearch, `{"query":5}`, msgSearchQuery},
		{methodSearch, `{}`, msgSearchQuery},
		{methodDescribe, `{"id":null}`, msgDescribeID},
		{methodDescribe, `{"id":"` + testToolID + `"}`, `{"id":"` + testToolID + `","name":"issue_create","input":{"repository":"string","title":"string"}}`},
		{methodCall, `{"id":["x"]}`, msgCallID},
		{methodCall, `{"id":"` + testToolID + `"}`, `{"name":"issue_create","input":null}`},
		{methodCall, `{"id":"` + testToolID + `","args":` + strings.Repeat("[", MaxValueDepth+1) + strings.Repeat("]", MaxValueDepth+1) + `}`, bridgeArgsDepthMessage()},
		{"exec", `{"command":"id"}`, msgUnsupported},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.args[:min(len(tc.args), 64)], func(t *testing.T) {
			b := &fakeBridge{}
			v, err := dispatchBridge(context.Background(), b, tc.method, json.RawMessage(tc.args))
			got := string(v)
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if tc.method == methodSearch && err == nil && b.lastLimit != 0 {
				t.Errorf("negative limit passed as %d, want 0", b.lastLimit)
			}
		})
	}
}
