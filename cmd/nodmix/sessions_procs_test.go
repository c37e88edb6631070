package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sessionShow is `nodmix sessions show KEY --json`, decoded.
type sessionShow struct {
	Session struct {
		Key      string `json:"key"`
		Messages int    `json:"messages"`
	} `json:"session"`
	Messages []struct {
		Role  string `json:"role"`
		Parts []struct {
			Kind   string `json:"kind"`
			Text   string `json:"text"`
			CallID string `json:"call_id"`
		} `json:"parts"`
	} `json:"messages"`
}

func showSession(t *testing.T, env []string, key string) sessionShow {
	t.Helper()
	out, errOut, code := run(t, env, "", "sessions", "show", key, "--json")
	if code != 0 {
		t.Fatalf("sessions show %s: exit %d\n%s", key, code, errOut)
	}
	var s sessionShow
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("sessions show %s: %v\n%s", key, err, out)
	}
	return s
}

// wholeTranscript reports what makes a transcript unusable by later turns: a tool call without its
// result, a result without its call.
func wholeTranscript(s sessionShow) error {
	open := map[string]bool{}
	for i, m := range s.Messages {
		for _, p := range m.Parts {
			switch p.Kind {
			case "tool_call":
				open[p.CallID] = true
			case "tool_result":
				if !open[p.CallID] {
					return fmt.Errorf("message %d: a result of call %q, which is not open", i, p.CallID)
				}
				delete(open, p.CallID)
			}
		}
		if m.Role == "user" && len(open) > 0 {
			return fmt.Errorf("message %d: a user message after calls without results: %v", i, open)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("calls without results at the end: %v", open)
	}
	return nil
}

// A `nodmix agent --session` run killed (SIGKILL) in the middle of its turn, while a tool runs or
// at any moment of its writes, leaves the session whole: every complete step kept, no call
// without its result, the file readable at once (no lock left behind), and the next turn runs.
func TestKilledTurnLeavesAWholeSession(t *testing.T) {
	home := t.TempDir()
	env := baseEnv(home)
	if _, errOut, code := run(t, env, "", "agent", "--session", "s", "-m", "first question", "--model", "scripted/demo"); code != 0 {
		t.Fatalf("first turn: exit %d\n%s", code, errOut)
	}
	// Killed while its tool runs: the question is kept, the call is not (it has no result yet).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "agent", "--session", "s", "-m", `exec {"command": ["sleep", "60"]}`, "--model", "scripted/demo")
	cmd.Env = env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(stderr.String(), "→ exec") {
		if ctx.Err() != nil {
			t.Fatalf("the tool call did not start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	s := showSession(t, env, "s")
	if err := wholeTranscript(s); err != nil {
		t.Errorf("after a kill during the tool call: %v", err)
	}
	if n := len(s.Messages); n != 3 || s.Messages[2].Role != "user" {
		t.Errorf("after a kill during the tool call: %d messages, want the first turn and the question", n)
	}
	// Killed at many moments of a fast turn with a tool call: whatever was cut, the session
	// stays whole and usable.
	for i, delay := range []time.Duration{0, 5, 10, 20, 40, 60, 80, 120, 160, 240} {
		cmd := exec.CommandContext(ctx, binary, "agent", "--session", "s", "-m", fmt.Sprintf(`exec {"command": ["echo", "run %d"]}`, i), "--model", "scripted/demo")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay * time.Millisecond)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if err := wholeTranscript(showSession(t, env, "s")); err != nil {
			t.Errorf("after a kill at %d ms: %v", delay, err)
		}
	}
	out, errOut, code := run(t, env, "", "agent", "--session", "s", "-m", "after the kills", "--model", "scripted/demo")
	if code != 0 || !strings.Contains(out, "You said: after the kills") {
		t.Fatalf("the turn after the kills: exit %d\n%s\n%s", code, out, errOut)
	}
	s = showSession(t, env, "s")
	if err := wholeTranscript(s); err != nil {
		t.Error(err)
	}
	if s.Messages[0].Parts[0].Text != "first question" {
		t.Errorf("the first turn was lost: %+v", s.Messages[0])
	}
}

// A gateway and `nodmix agent --session` runs write one state.db at once, on their own sessions
// and on one they share, while `nodmix sessions list` reads: no turn fails but as busy (the
// shared session, clearly refused), none sees "database is locked", every own turn is kept whole.
func TestGatewayAndAgentsShareStateDB(t *testing.T) {
	home := t.TempDir()
	env := baseEnv(home)
	base := strings.TrimSuffix(startGateway(t, env), "/mcp")
	const workers, turns = 3, 4
	var mu sync.Mutex
	var failures []string
	shared := 0 // shared turns that succeeded
	fail := func(who, msg string) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, who+": "+msg)
	}
	busy := func(msg string) bool {
		return strings.Contains(msg, "busy") && !strings.Contains(msg, "locked") && !strings.Contains(strings.ToLower(msg), "sqlite")
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { // a gateway client
			for i := range turns {
				for _, key := range []string{fmt.Sprintf("gw-%d", w), "shared"} {
					body := fmt.Sprintf(`{"model": "scripted/demo", "messages": [{"role": "user", "content": "gw %d turn %d"}]}`, w, i)
					code, resp := chat(t, base, key, body)
					switch {
					case code == 200 && key == "shared":
						mu.Lock()
						shared++
						mu.Unlock()
					case code == 200:
					case code == 409 && key == "shared" && busy(string(resp)):
					default:
						fail(fmt.Sprintf("gateway %s turn %d", key, i), fmt.Sprintf("%d %s", code, resp))
					}
				}
			}
		})
		wg.Go(func() { // `nodmix agent` runs
			for i := range turns {
				for _, key := range []string{fmt.Sprintf("cli-%d", w), "shared"} {
					out, errOut, code := run(t, env, "", "agent", "--session", key, "-m", fmt.Sprintf("cli %d turn %d", w, i), "--model", "scripted/demo")
					switch {
					case code == 0 && key == "shared":
						mu.Lock()
						shared++
						mu.Unlock()
					case code == 0:
					case code == 1 && key == "shared" && busy(errOut):
					default:
						fail(fmt.Sprintf("agent %s turn %d", key, i), fmt.Sprintf("exit %d %s %s", code, out, errOut))
					}
				}
			}
		})
	}
	wg.Go(func() {
		for range 2 * turns {
			if _, errOut, code := run(t, env, "", "sessions", "list"); code != 0 {
				fail("sessions list", errOut)
			}
		}
	})
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	for w := range workers {
		for _, key := range []string{fmt.Sprintf("gw-%d", w), fmt.Sprintf("cli-%d", w)} {
			s := showSession(t, env, key)
			if len(s.Messages) != 2*turns {
				t.Errorf("%s: %d messages, want %d", key, len(s.Messages), 2*turns)
			}
		}
	}
	s := showSession(t, env, "shared")
	answers := 0
	for _, m := range s.Messages {
		if m.Role == "assistant" {
			answers++
		}
	}
	if answers != shared {
		t.Errorf("shared: %d answers kept, %d turns succeeded", answers, shared)
	}
}

// `nodmix sessions rm` while a turn of that session runs in another process: the removal holds;
// the turn fails at its next write instead of bringing part of the session back.
func TestRemoveDuringATurn(t *testing.T) {
	home := t.TempDir()
	env := baseEnv(home)
	if _, errOut, code := run(t, env, "", "agent", "--session", "s", "-m", "hello", "--model", "scripted/demo"); code != 0 {
		t.Fatalf("first turn: exit %d\n%s", code, errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "agent", "--session", "s", "-m", `exec {"command": ["sleep", "3"]}`, "--model", "scripted/demo")
	cmd.Env = env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(stderr.String(), "→ exec") {
		if ctx.Err() != nil {
			t.Fatalf("the tool call did not start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out, errOut, code := run(t, env, "", "sessions", "rm", "s"); code != 0 || out != "removed s\n" {
		t.Fatalf("sessions rm during the turn: exit %d\n%s%s", code, out, errOut)
	}
	if err := cmd.Wait(); err == nil {
		t.Error("the turn of a removed session succeeded")
	}
	if !strings.Contains(stderr.String(), `session "s"`) {
		t.Errorf("the turn's error does not name the session:\n%s", stderr.String())
	}
	if out, _, _ := run(t, env, "", "sessions", "list"); out != "no sessions\n" {
		t.Errorf("after the removal and the turn:\n%s", out)
	}
}

// While a `nodmix agent --session` turn runs, a turn on that session in any other process (a
// second `nodmix agent`, a gateway on the same state.db) is refused at once as busy, storing
// nothing and calling no model; once the first is killed (SIGKILL: it releases nothing), the
// next turn runs at once, without waiting for the killed turn's lease to expire.
func TestSecondProcessTurnIsBusy(t *testing.T) {
	home := t.TempDir()
	env := baseEnv(home)
	if _, errOut, code := run(t, env, "", "agent", "--session", "s", "-m", "hello", "--model", "scripted/demo"); code != 0 {
		t.Fatalf("first turn: exit %d\n%s", code, errOut)
	}
	base := strings.TrimSuffix(startGateway(t, env), "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "agent", "--session", "s", "-m", `exec {"command": ["sleep", "60"]}`, "--model", "scripted/demo")
	cmd.Env = env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for !strings.Contains(stderr.String(), "→ exec") {
		if ctx.Err() != nil {
			t.Fatalf("the tool call did not start:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := showSession(t, env, "s")
	out, errOut, code := run(t, env, "", "agent", "--session", "s", "-m", "meanwhile", "--model", "scripted/demo")
	if code != 1 || !strings.Contains(errOut, `session "s": the session is busy with another turn`) {
		t.Errorf("a second agent turn while one runs: exit %d\n%s%s", code, out, errOut)
	}
	status, body := chat(t, base, "s", `{"model": "scripted/demo", "messages": [{"role": "user", "content": "meanwhile"}]}`)
	if status != 409 || !strings.Contains(string(body), `"code":"session_busy"`) {
		t.Errorf("a gateway turn while one runs: %d %s, want 409 session_busy", status, body)
	}
	if diff := cmp.Diff(before, showSession(t, env, "s")); diff != "" {
		t.Errorf("the refused turns changed the transcript (-before +after):\n%s", diff)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	out, errOut, code = run(t, env, "", "agent", "--session", "s", "-m", "after the kill", "--model", "scripted/demo")
	if code != 0 || !strings.Contains(out, "You said: after the kill") {
		t.Fatalf("the turn after the kill: exit %d\n%s%s", code, out, errOut)
	}
	status, body = chat(t, base, "s", `{"model": "scripted/demo", "messages": [{"role": "user", "content": "and the gateway"}]}`)
	if status != 200 {
		t.Errorf("a gateway turn after the kill: %d %s", status, body)
	}
	if err := wholeTranscript(showSession(t, env, "s")); err != nil {
		t.Error(err)
	}
}
