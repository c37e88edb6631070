package policy

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// fakeAsker answers from a script and records what it was asked.
type fakeAsker struct {
	mu      sync.Mutex
	answers []Decision
	err     error
	asked   []ApprovalRequest
}

func (a *fakeAsker) Ask(_ context.Context, req ApprovalRequest) (Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	if a.err != nil {
		return Decision{}, a.err
	}
	if len(a.answers) == 0 {
		return Decision{}, errors.New("unexpected question")
	}
	d := a.answers[0]
	a.answers = a.answers[1:]
	return d, nil
}

func call(t catalog.Tool, args, session string) catalog.Call {
	return catalog.Call{Tool: &t, Args: json.RawMessage(args), Session: session}
}

func reason(err error) string {
	var b *dispatch.BlockedError
	if errors.As(err, &b) {
		return b.Reason
	}
	if err != nil {
		return "NOT BLOCKED ERROR: " + err.Error()
	}
	return ""
}

func TestApprovalAsks(t *testing.T) {
	asker := &fakeAsker{answers: []Decision{{Approve: true}, {Approve: true}, {Approve: false, Reason: "not today"}}}
	g, err := NewApprovalGate(ApprovalConfig{Require: []string{"mcp:github:*"}, Asker: asker})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Not matched: runs without a question.
	if err := g.Check(ctx, call(execTool, `{"cmd":"ls"}`, "s1")); err != nil {
		t.Fatalf("unmatched tool blocked: %v", err)
	}
	// Matched: asked with the canonical arguments, approved once.
	if err := g.Check(ctx, call(ghCreate, `{"title":"t", "repo":"a/b"}`, "s1")); err != nil {
		t.Fatalf("approved call blocked: %v", err)
	}
	// The same call again is a new call: the approval was used, so it asks again.
	if err := g.Check(ctx, call(ghCreate, `{"repo":"a/b","title":"t"}`, "s1")); err != nil {
		t.Fatalf("second approved call blocked: %v", err)
	}
	// A denial blocks with the person's reason.
	got := reason(g.Check(ctx, call(ghCreate, `{"repo":"a/b","title":"other"}`, "s1")))
	if want := "the user denied approval: not today"; got != want {
		t.Fatalf("denied call reason = %q, want %q", got, want)
	}
	want := []ApprovalRequest{
		{ToolID: ghCreate.ID, ToolName: ghCreate.Name, Source: catalog.SourceMCP, Args: json.RawMessage(`{"repo":"a/b","title":"t"}`), Session: "s1", Pattern: "mcp:github:*"},
		{ToolID: ghCreate.ID, ToolName: ghCreate.Name, Source: catalog.SourceMCP, Args: json.RawMessage(`{"repo":"a/b","title":"t"}`), Session: "s1", Pattern: "mcp:github:*"},
		{ToolID: ghCreate.ID, ToolName: ghCreate.Name, Source: catalog.SourceMCP, Args: json.RawMessage(`{"repo":"a/b","title":"other"}`), Session: "s1", Pattern: "mcp:github:*"},
	}
	if diff := cmp.Diff(want, asker.asked); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
}

func TestApprovalRefusesWithoutAsker(t *testing.T) {
	for _, asker := range []Asker{nil, &fakeAsker{err: ErrCannotAsk}, &fakeAsker{err: errors.Join(errors.New("no tty"), ErrCannotAsk)}} {
		g, err := NewApprovalGate(ApprovalConfig{Require: []string{"exec"}, Asker: asker})
		if err != nil {
			t.Fatal(err)
		}
		got := reason(g.Check(context.Background(), call(execTool, `{}`, "")))
		want := `approval required (tools.approval.require matches "exec") and no one can be asked on this surface. ` +
			`Run the call from a terminal with the nodmix CLI, which asks there. To stop requiring approval, remove "exec" from tools.approval.require.`
		if got != want {
			t.Errorf("asker %T: reason\n got %q\nwant %q", asker, got, want)
		}
	}
}

func TestApprovalAskerFailureBlocks(t *testing.T) {
	g, _ := NewApprovalGate(ApprovalConfig{Require: []string{"*"}, Asker: &fakeAsker{err: errors.New("terminal went away")}})
	if got := reason(g.Check(context.Background(), call(execTool, `{}`, ""))); got != "approval required, and asking for it failed" {
		t.Fatalf("reason = %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g, _ = NewApprovalGate(ApprovalConfig{Require: []string{"*"}, Asker: &fakeAsker{err: context.Canceled}})
	if got := reason(g.Check(ctx, call(execTool, `{}`, ""))); got != "approval required, and the wait for it was canceled" {
		t.Fatalf("reason = %q", got)
	}
}

var tokenRE = regexp.MustCompile("`nodmix approvals grant ([a-z2-7]{16})`")

func refusedToken(t *testing.T, err error) string {
	t.Helper()
	m := tokenRE.FindStringSubmatch(reason(err))
	if m == nil {
		t.Fatalf("refusal carries no token: %q", reason(err))
	}
	return m[1]
}

// TestApprovalTokenBinding: a token approves exactly one call with exactly the refused tool,
// arguments and session.
func TestApprovalTokenBinding(t *testing.T) {
	g, err := NewApprovalGate(ApprovalConfig{Require: []string{"mcp:*"}, GrantCommand: "nodmix approvals grant"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := call(ghCreate, `{"title":"t","repo":"a/b"}`, "s1")

	tok := refusedToken(t, g.Check(ctx, c))
	pend, err := g.Pending(ctx)
	if err != nil || len(pend) != 1 || pend[0].Token != tok || pend[0].ToolID != ghCreate.ID || string(pend[0].Args) != `{"repo":"a/b","title":"t"}` {
		t.Fatalf("pending = %+v, %v", pend, err)
	}
	if _, err := g.Grant(ctx, tok); err != nil {
		t.Fatalf("Grant: %v", err)
	}
	if _, err := g.Grant(ctx, tok); !errors.Is(err, ErrUnknownToken) {
		t.Fatalf("second Grant of one token: err = %v, want ErrUnknownToken", err)
	}

	// Neither other arguments, nor another tool, nor another session use the grant.
	for _, other := range []catalog.Call{
		call(ghCreate, `{"title":"t","repo":"a/c"}`, "s1"),
		call(ghDelete, `{"title":"t","repo":"a/b"}`, "s1"),
		call(ghCreate, `{"title":"t","repo":"a/b"}`, "s2"),
	} {
		refusedToken(t, g.Check(ctx, other))
	}
	// The approved call runs once, whatever the key order of its arguments...
	if err := g.Check(ctx, call(ghCreate, `{ "repo": "a/b", "title": "t" }`, "s1")); err != nil {
		t.Fatalf("granted call blocked: %v", err)
	}
	// ... and only once.
	refusedToken(t, g.Check(ctx, c))
}

func TestApprovalGrantExpires(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := NewMemoryGrants(func() time.Time { return now })
	g, _ := NewApprovalGate(ApprovalConfig{Require: []string{"*"}, GrantCommand: "nodmix approvals grant", Store: store, TTL: time.Minute})
	ctx := context.Background()
	// The gate stamps expiry with the wall clock; pin it through the store's clock instead.
	p := Pending{Token: "tok", Binding: Binding("", execTool.ID, []byte(`{}`)), ToolID: execTool.ID, Expires: now.Add(time.Minute)}
	if err := store.SavePending(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Grant(ctx, "tok"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	refusedToken(t, g.Check(ctx, call(execTool, `{}`, "")))

	if err := store.SavePending(ctx, Pending{Token: "late", Expires: now.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if _, err := g.Grant(ctx, "late"); !errors.Is(err, ErrUnknownToken) {
		t.Fatalf("expired token granted: %v", err)
	}
}

// TestApprovalOneGrantOneCall races two identical calls for one grant.
func TestApprovalOneGrantOneCall(t *testing.T) {
	store := NewMemoryGrants(nil)
	g, _ := NewApprovalGate(ApprovalConfig{Require: []string{"*"}, Store: store})
	ctx := context.Background()
	b := Binding("s", execTool.ID, []byte(`{"a":1}`))
	_ = store.SavePending(ctx, Pending{Token: "t", Binding: b, Expires: time.Now().Add(time.Hour)})
	if _, err := store.Grant(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	var passed atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if g.Check(ctx, call(execTool, `{"a":1}`, "s")) == nil {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if passed.Load() != 1 {
		t.Fatalf("%d calls passed on one grant, want 1", passed.Load())
	}
}

func TestApprovalExempt(t *testing.T) {
	g, _ := NewApprovalGate(ApprovalConfig{Require: []string{"*"}, Exempt: func(t *catalog.Tool) bool { return t.Name == "exec" }})
	if err := g.Check(context.Background(), call(execTool, `{}`, "")); err != nil {
		t.Fatalf("exempt tool held: %v", err)
	}
	if g.Check(context.Background(), call(fsRead, `{}`, "")) == nil {
		t.Fatal("non-exempt tool passed without approval")
	}
}

func TestApprovalConfigErrors(t *testing.T) {
	_, err := NewApprovalGate(ApprovalConfig{Require: []string{"ok", "bad["}})
	if err == nil || err.Error() != `tools.approval.require[1]: "bad[" unterminated character class` {
		t.Fatalf("err = %v", err)
	}
}

func TestBindingSeparatesParts(t *testing.T) {
	if Binding("a", "bc", nil) == Binding("ab", "c", nil) {
		t.Fatal("binding does not separate its parts")
	}
	if Binding("s", "x", []byte(`{}`)) != Binding("s", "x", []byte(`{}`)) {
		t.Fatal("binding is not deterministic")
	}
}

// TestApprovalInPipeline checks the message the model reads and that a refused call never runs.
func TestApprovalInPipeline(t *testing.T) {
	ran := false
	snap, _ := catalog.NewSnapshot(1, []catalog.Entry{{Tool: execTool, Exec: catalog.ExecutorFunc(func(context.Context, catalog.Call) (*catalog.Result, error) {
		ran = true
		return catalog.TextResult("ok"), nil
	})}})
	g, _ := NewApprovalGate(ApprovalConfig{Require: []string{"exec"}, Asker: &fakeAsker{answers: []Decision{{Approve: false}}}})
	p := &dispatch.Pipeline{Gates: []dispatch.Gate{g}}
	res, err := p.Call(context.Background(), snap, dispatch.Request{Target: "exec", Args: json.RawMessage(`{"cmd":"rm -rf x"}`)})
	if err != nil || ran || !res.IsError {
		t.Fatalf("res = %+v, err = %v, ran = %v", res, err, ran)
	}
	if want := `Tool "nodmix:core:exec" was blocked before execution: the user denied approval`; !strings.HasPrefix(res.Text(), want) {
		t.Fatalf("text = %q, want %q", res.Text(), want)
	}
}

// TestApprovalRefusesRepeatedKeys: arguments that give a key twice read differently to different
// parsers (Go keeps the last value, others the first), and the executor gets them as sent while the
// person is shown the canonical form, which keeps one. Such a call is refused, at any depth, without
// asking and without running; arguments without repeats are asked about as before.
func TestApprovalRefusesRepeatedKeys(t *testing.T) {
	var ran []string
	snap, _ := catalog.NewSnapshot(1, []catalog.Entry{{Tool: ghCreate, Exec: catalog.ExecutorFunc(func(_ context.Context, c catalog.Call) (*catalog.Result, error) {
		ran = append(ran, string(c.Args))
		return catalog.TextResult("ok"), nil
	})}})
	asker := &fakeAsker{answers: []Decision{{Approve: true}, {Approve: true}}}
	g, _ := NewApprovalGate(ApprovalConfig{Require: []string{"mcp:*"}, Asker: asker})
	p := &dispatch.Pipeline{Gates: []dispatch.Gate{g}}
	tests := []struct {
		args    string
		blocked bool
	}{
		{`{"repo":"victim/prod","repo":"me/sandbox","title":"t"}`, true},
		{`{"repo":"me/sandbox","body":{"labels":["a"],"labels":["b"]}}`, true},
		{`{"repo":"victim/prod","r\u0065po":"me/sandbox"}`, true}, // the same key, escaped
		{`{"items":[{"a":1},{"a":2}],"repo":"me/sandbox"}`, false},
		{`{"repo":"me/sandbox","Repo":"x"}`, false},
	}
	var want []string
	for _, tt := range tests {
		res, err := p.Call(context.Background(), snap, dispatch.Request{Target: ghCreate.Name, Args: json.RawMessage(tt.args)})
		if err != nil {
			t.Fatal(err)
		}
		if tt.blocked != res.IsError {
			t.Errorf("%s: blocked = %v, want %v (%s)", tt.args, res.IsError, tt.blocked, res.Text())
		}
		if tt.blocked && !strings.Contains(res.Text(), "arguments repeat the key") {
			t.Errorf("%s: reason %q does not say why", tt.args, res.Text())
		}
		if !tt.blocked {
			want = append(want, tt.args)
		}
	}
	if d := cmp.Diff(want, ran); d != "" {
		t.Errorf("calls that ran (-want +got):\n%s", d)
	}
	if len(asker.asked) != len(want) {
		t.Errorf("asked %d times, want %d", len(asker.asked), len(want))
	}
}
