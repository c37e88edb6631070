package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

type denyNamed string

func (d denyNamed) Allowed(t *catalog.Tool) bool { return t.Name != string(d) }

type gateFunc func(ctx context.Context, c catalog.Call) error

func (g gateFunc) Check(ctx context.Context, c catalog.Call) error { return g(ctx, c) }

type middlewareFunc func(ctx context.Context, c catalog.Call, r *catalog.Result) (*catalog.Result, error)

func (m middlewareFunc) Process(ctx context.Context, c catalog.Call, r *catalog.Result) (*catalog.Result, error) {
	return m(ctx, c, r)
}

type recorder struct{ events []dispatch.Event }

func (r *recorder) Observe(ev dispatch.Event) { r.events = append(r.events, ev) }

func snapshot(t *testing.T) *catalog.Snapshot {
	t.Helper()
	echo := catalog.ExecutorFunc(func(_ context.Context, c catalog.Call) (*catalog.Result, error) {
		return catalog.TextResult(string(c.Args)), nil
	})
	broken := catalog.ExecutorFunc(func(context.Context, catalog.Call) (*catalog.Result, error) {
		return nil, errors.New("connection reset")
	})
	crashing := catalog.ExecutorFunc(func(context.Context, catalog.Call) (*catalog.Result, error) {
		var m map[string]any
		m["x"] = 1 // a nil map: a panic
		return nil, nil
	})
	s, err := catalog.NewSnapshot(1, []catalog.Entry{
		{Tool: catalog.Tool{ID: "nodmix:core:crash", Name: "crash", Source: catalog.SourceBuiltin}, Exec: crashing},
		{Tool: catalog.Tool{ID: "nodmix:core:echo", Name: "echo", Source: catalog.SourceBuiltin}, Exec: echo},
		{Tool: catalog.Tool{ID: "mcp:s:secret", Name: "secret", Source: catalog.SourceMCP}, Exec: echo},
		{Tool: catalog.Tool{ID: "mcp:s:broken", Name: "broken", Source: catalog.SourceMCP}, Exec: broken},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPipeline(t *testing.T) {
	snap := snapshot(t)
	rec := &recorder{}
	p := &dispatch.Pipeline{
		Policy: denyNamed("secret"),
		Gates: []dispatch.Gate{gateFunc(func(_ context.Context, c catalog.Call) error {
			if string(c.Args) == `{"block":true}` {
				return &dispatch.BlockedError{Reason: "hook said no"}
			}
			if string(c.Args) == `{"gatecrash":true}` {
				var m map[string]bool
				m["x"] = true // a nil map: a panic
			}
			return nil
		})},
		Observers: []dispatch.Observer{rec},
	}
	ctx := context.Background()
	tests := []struct {
		target, args string
		wantErr      error
		wantText     string
		wantIsError  bool
		outcome      string
	}{
		{"echo", `{ "a" : 1 }`, nil, `{"a":1}`, false, "ok"},
		{"nodmix:core:echo", ``, nil, `{}`, false, "ok"},
		{"nope", `{}`, dispatch.ErrUnknownTool, "", false, "unknown"},
		{"secret", `{}`, dispatch.ErrDenied, "", false, "denied"},
		{"echo", `[1]`, nil, `Invalid arguments for tool "nodmix:core:echo": arguments must be a JSON object`, true, "invalid"},
		{"echo", `{"block":true}`, nil, `Tool "nodmix:core:echo" was blocked before execution: hook said no`, true, "blocked"},
		{"broken", `{}`, nil, `Tool "mcp:s:broken" failed: connection reset`, true, "error"},
		{"crash", `{}`, nil, `Tool "nodmix:core:crash" failed: it crashed`, true, "error"},
		{"echo", `{"gatecrash":true}`, nil, `Tool "nodmix:core:echo" was blocked before execution: the check before the call crashed`, true, "blocked"},
		{"echo", `{"a":1,"b":{"c":[{"d":1,"d":2}]}}`, nil, `Invalid arguments for tool "nodmix:core:echo": arguments repeat the key "d": send each key once`, true, "invalid"},
		{"echo", `{"repo":"x","r\u0065po":"y"}`, nil, `Invalid arguments for tool "nodmix:core:echo": arguments repeat the key "repo": send each key once`, true, "invalid"},
		{"echo", `{"a":[{"k":1},{"k":2}],"A":1}`, nil, `{"a":[{"k":1},{"k":2}],"A":1}`, false, "ok"},
	}
	for _, tt := range tests {
		res, err := p.Call(ctx, snap, dispatch.Request{Target: tt.target, Args: json.RawMessage(tt.args), Session: "s"})
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
			t.Errorf("%s %s: err = %v, want %v", tt.target, tt.args, err, tt.wantErr)
			continue
		}
		if err == nil && (res.Text() != tt.wantText || res.IsError != tt.wantIsError) {
			t.Errorf("%s %s: result %q (error %v), want %q (error %v)", tt.target, tt.args, res.Text(), res.IsError, tt.wantText, tt.wantIsError)
		}
		if got := rec.events[len(rec.events)-1].Outcome; got != tt.outcome {
			t.Errorf("%s %s: outcome %q, want %q", tt.target, tt.args, got, tt.outcome)
		}
	}
}

func TestMiddlewareFailsOpen(t *testing.T) {
	snap := snapshot(t)
	ctx := context.Background()
	upper := middlewareFunc(func(_ context.Context, _ catalog.Call, r *catalog.Result) (*catalog.Result, error) {
		return catalog.TextResult("compacted " + r.Text()), nil
	})
	failing := middlewareFunc(func(context.Context, catalog.Call, *catalog.Result) (*catalog.Result, error) {
		return nil, errors.New("rule failed")
	})
	panicking := middlewareFunc(func(context.Context, catalog.Call, *catalog.Result) (*catalog.Result, error) {
		panic("rule bug")
	})
	tests := []struct {
		chain []dispatch.Middleware
		want  string
	}{
		{[]dispatch.Middleware{upper}, `compacted {"x":1}`},
		{[]dispatch.Middleware{failing}, `{"x":1}`},
		{[]dispatch.Middleware{panicking, upper}, `compacted {"x":1}`},
	}
	for i, tt := range tests {
		p := &dispatch.Pipeline{Middleware: tt.chain}
		res, err := p.Call(ctx, snap, dispatch.Request{Target: "echo", Args: json.RawMessage(`{"x":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, res.Text()); diff != "" {
			t.Errorf("chain %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b": 1, "a": {"d": 2.50, "c": [1, "x"]}}`, `{"a":{"c":[1,"x"],"d":2.50},"b":1}`},
		{`{"a":{"c":[1,"x"],"d":2.50},"b":1}`, `{"a":{"c":[1,"x"],"d":2.50},"b":1}`},
		// What a person approves reads as the model wrote it, not as HTML escapes.
		{`{"cmd": "a < b && c > d", "u": "\u003c"}`, `{"cmd":"a < b && c > d","u":"<"}`},
		{`{"s": "line\u2028sep \\u003c"}`, `{"s":"line\u2028sep \\u003c"}`},
	} {
		got, err := dispatch.Canonical(json.RawMessage(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if diff := cmp.Diff(tc.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}

// Distinct arguments must not share a canonical form: one approval would then cover both.
func TestCanonicalKeepsDistinctArgsApart(t *testing.T) {
	distinct := []string{
		"{\"a\":\"\xff\"}",
		"{\"a\":\"\xfe\"}",
		`{"a":"\ud800"}`,
		`{"a":"\udc00"}`,
		`{"a":"\ud800x"}`,
		`{"a":"\ud800\n"}`,
		`{"a":"\ud800\ud800"}`,
		`{"a":"\ufffd"}`,
		`{"a":"\ud83d\ude00"}`,
		`{"a":"\\ud800"}`,
		`{"a":"\\\ud83d\ude00"}`,
	}
	seen := map[string]string{}
	for _, in := range distinct {
		args, err := dispatch.ObjectArgs(json.RawMessage(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		c, err := dispatch.Canonical(args)
		if err != nil {
			continue // refused: no approval can be bound to it
		}
		if prev, ok := seen[string(c)]; ok {
			t.Errorf("%q and %q share the canonical form %q", prev, in, c)
		}
		seen[string(c)] = in
	}
	for _, in := range []string{`{"a":"\ufffd"}`, `{"a":"\ud83d\ude00"}`, `{"a":"\\ud800"}`, `{"a":"\\\ud83d\ude00"}`, `{"a":"é\t"}`} {
		if _, err := dispatch.Canonical(json.RawMessage(in)); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// A call whose context ends while its gates run (an approval granted as the client hangs up)
// does not start the tool.
func TestCanceledCallDoesNotExecute(t *testing.T) {
	ran := false
	exec := catalog.ExecutorFunc(func(context.Context, catalog.Call) (*catalog.Result, error) {
		ran = true
		return catalog.TextResult("done"), nil
	})
	snap, err := catalog.NewSnapshot(1, []catalog.Entry{{Tool: catalog.Tool{ID: "nodmix:core:rm", Name: "rm", Source: catalog.SourceBuiltin}, Exec: exec}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	p := &dispatch.Pipeline{
		Gates:     []dispatch.Gate{gateFunc(func(context.Context, catalog.Call) error { cancel(); return nil })},
		Observers: []dispatch.Observer{rec},
	}
	res, err := p.Call(ctx, snap, dispatch.Request{Target: "rm", Args: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("the executor ran after the call was canceled")
	}
	want := `Tool "nodmix:core:rm" was not run: the call was canceled`
	if diff := cmp.Diff(want, res.Text()); diff != "" || !res.IsError {
		t.Errorf("result (error %v) (-want +got):\n%s", res.IsError, diff)
	}
	if got := rec.events[len(rec.events)-1].Outcome; got != "blocked" {
		t.Errorf("outcome %q, want blocked", got)
	}
}
