package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/agent"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
)

func userText(s string) []llm.Message {
	return []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: s}}}}
}

// persistentApp opens an app with cfg on a SQLite store in a temp home.
func persistentApp(t *testing.T, cfg string) *App {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NODMIX_HOME": home, "HOME": home, "OPENAI_API_KEY": "sk-test"}
	a, err := New(context.Background(), Options{Getenv: func(k string) string { return env[k] }, Persistent: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// effort is the reasoning effort a turn of the session would send.
func effort(t *testing.T, a *App, req TurnRequest, text string) string {
	t.Helper()
	req.Input = userText(text)
	dr, reply, err := a.Prepare(context.Background(), req)
	if err != nil || reply != "" {
		t.Fatalf("prepare %q: %v %q", text, err, reply)
	}
	var body struct {
		Reasoning struct{ Effort string } `json:"reasoning"`
	}
	_ = json.Unmarshal(dr.Body, &body)
	return body.Reasoning.Effort
}

func directiveTurn(t *testing.T, a *App, req TurnRequest, text string) string {
	t.Helper()
	req.Input = userText(text)
	res, err := a.Turn(context.Background(), req)
	if err != nil || !res.Directive {
		t.Fatalf("%q: %v %+v", text, err, res)
	}
	return res.Text
}

// TestResolutionThroughTheStore: inline → session override (kept in SQLite) → per-agent
// default → global default → the provider's default, each layer set and cleared.
func TestResolutionThroughTheStore(t *testing.T) {
	a := persistentApp(t, `{agents: {defaults: {model: "openai/gpt-5.2", thinkingDefault: "low"}, list: [{id: "deep", thinkingDefault: "high"}]}}`)
	plain := TurnRequest{Session: "s"}
	deep := TurnRequest{Session: "d", Agent: "deep"}
	steps := []struct {
		name string
		do   func() string
		want string
	}{
		{"global default", func() string { return effort(t, a, plain, "hi") }, "low"},
		{"per-agent default", func() string { return effort(t, a, deep, "hi") }, "high"},
		{"session override", func() string {
			if got := directiveTurn(t, a, plain, "/think xhigh"); got != "Thinking level set to xhigh." {
				t.Errorf("reply = %q", got)
			}
			return effort(t, a, plain, "hi")
		}, "xhigh"},
		{"override beats the agent", func() string { directiveTurn(t, a, deep, "/t medium"); return effort(t, a, deep, "hi") }, "medium"},
		{"inline beats the override, for its message only", func() string { return effort(t, a, plain, "/think:high hi") }, "high"},
		{"the override is still there", func() string { return effort(t, a, plain, "hi") }, "xhigh"},
		{"an invalid level changes nothing", func() string { directiveTurn(t, a, plain, "/think big"); return effort(t, a, plain, "hi") }, "xhigh"},
		{"cleared: back to the global default", func() string { directiveTurn(t, a, plain, "/think inherit"); return effort(t, a, plain, "hi") }, "low"},
		{"cleared: back to the agent's", func() string { directiveTurn(t, a, deep, "/think reset"); return effort(t, a, deep, "hi") }, "high"},
		{"an explicit off is stored", func() string { directiveTurn(t, a, plain, "/think off"); return effort(t, a, plain, "hi") }, "none"},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Errorf("%s: effort %q, want %q", s.name, got, s.want)
		}
	}
	info, err := a.Store.Session(context.Background(), "s")
	if err != nil || info.Overrides["thinking"] != "off" {
		t.Errorf("stored overrides = %v, %v", info, err)
	}
	// Without any configured default the provider's own default applies.
	b := persistentApp(t, `{agents: {defaults: {model: "openai/gpt-5.2"}}}`)
	if got := effort(t, b, TurnRequest{Session: "x"}, "hi"); got != "medium" {
		t.Errorf("provider default: %q, want medium", got)
	}
}

func TestModelRowsCarryTheProfile(t *testing.T) {
	a := persistentApp(t, `{agents: {defaults: {model: "zai/glm-4.7"}}}`)
	rows := a.Models()
	if rows[0].Ref != "zai/glm-4.7" {
		t.Fatalf("rows = %+v", rows)
	}
	if diff := cmp.Diff([]string{"off", "on"}, rows[0].ThinkingOptions); diff != "" || rows[0].ThinkingDefault != "low" {
		t.Errorf("zai row: %+v (%s)", rows[0], diff)
	}
}

// TestSessionKeepsItsAgent: a session run with --agent keeps that agent, whether its message
// was a turn or directives only: its row shows the agent's model and levels, and its next turn
// without --agent runs as that agent, on the agent's model.
func TestSessionKeepsItsAgent(t *testing.T) {
	type view struct{ Agent, Model, Thinking string }
	for _, first := range []string{"hi", "/verbose on"} {
		t.Run(first, func(t *testing.T) {
			a := persistentApp(t, `{models: {providers: {openai: {baseUrl: "http://127.0.0.1:1/v1"}}}, agents: {defaults: {model: "openai/gpt-5.2", thinkingDefault: "low"}, list: [{id: "deep", model: "scripted/demo", thinkingDefault: "high"}]}}`)
			ctx := context.Background()
			if _, err := a.Turn(ctx, TurnRequest{Session: "s", Agent: "deep", Input: userText(first)}); err != nil {
				t.Fatal(err)
			}
			rows, _, err := a.SessionRows(ctx, session.Cursor{}, session.DefaultPage)
			if err != nil || len(rows) != 1 {
				t.Fatalf("rows = %+v, %v", rows, err)
			}
			got := view{rows[0].Agent, rows[0].Model, string(rows[0].Levels.Thinking)}
			if diff := cmp.Diff(view{"deep", "scripted/demo", "high"}, got); diff != "" {
				t.Errorf("row after %q under --agent deep (-want +got):\n%s", first, diff)
			}
			res, err := a.Turn(ctx, TurnRequest{Session: "s", Input: userText("again")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Model != "scripted/demo" || res.Levels.Think != "high" {
				t.Errorf("next turn ran %s at %q, want scripted/demo at high", res.Model, res.Levels.Think)
			}
		})
	}
}

// TestBusyTurnKeepsNoAgent: a turn refused because another turn holds the session (here a lease
// of another holder, as another process's turn takes it) records nothing, not even the agent it
// was asked to run as.
func TestBusyTurnKeepsNoAgent(t *testing.T) {
	a := persistentApp(t, `{agents: {defaults: {model: "scripted/demo"}, list: [{id: "deep", thinkingDefault: "high"}]}}`)
	ctx := context.Background()
	if _, err := a.Turn(ctx, TurnRequest{Session: "s", Input: userText("/verbose on")}); err != nil {
		t.Fatal(err)
	}
	type leaser interface {
		Lease(ctx context.Context, key string, h session.Holder, ttl time.Duration) error
	}
	l, ok := a.Store.(leaser)
	if !ok {
		t.Fatalf("the store %T leases no sessions", a.Store)
	}
	if err := l.Lease(ctx, "s", session.NewHolder(os.Getpid()), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Turn(ctx, TurnRequest{Session: "s", Agent: "deep", Input: userText("hi")}); !errors.Is(err, agent.ErrBusy) {
		t.Fatalf("a turn on a leased session: %v, want ErrBusy", err)
	}
	info, err := a.Store.Session(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if info.Agent != "" {
		t.Errorf("the refused turn recorded agent %q on the session", info.Agent)
	}
}
