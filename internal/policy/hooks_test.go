package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// The test binary doubles as the hook program: with helperEnv set it acts out one behaviour
// instead of running tests.
const helperEnv = "NODMIX_POLICY_TEST_HOOK"

// helperPidFileEnv names the file where the "allow-bg" hook writes the pid it leaves running.
const helperPidFileEnv = "NODMIX_POLICY_TEST_HOOK_PIDFILE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(hookHelper(mode))
	}
	os.Exit(m.Run())
}

func hookHelper(mode string) int {
	in, _ := io.ReadAll(os.Stdin)
	switch mode {
	case "allow":
		return 0
	case "echo":
		// Print the input on the first line so the block reason carries it back to the test.
		fmt.Println(string(in))
		fmt.Println("second line is ignored")
		return 3
	case "stderr":
		fmt.Fprintln(os.Stderr, "")
		fmt.Fprintln(os.Stderr, "  blocked: \x1b[31mdestructive\x1b[0m command  ")
		return 1
	case "silent":
		return 7
	case "hang":
		time.Sleep(time.Hour)
		return 0
	case "allow-bg":
		// Allow, leaving a background process (a notifier, say) that holds stdout open; its pid
		// goes to the file the test names, so that the test can end it.
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), helperEnv+"=hang")
		child.Stdout = os.Stdout
		if child.Start() != nil {
			return 98
		}
		_ = os.WriteFile(os.Getenv(helperPidFileEnv), []byte(fmt.Sprint(child.Process.Pid)), 0o600)
		return 0
	case "hang-child":
		// Leave a grandchild holding stdout open, then hang: killing the group must reach both.
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), helperEnv+"=hang")
		child.Stdout = os.Stdout
		_ = child.Start()
		time.Sleep(time.Hour)
		return 0
	}
	return 99
}

func helperHook(mode string, tools ...string) (Hook, []string) {
	return Hook{Command: []string{os.Args[0], "-test.run=^$"}, Tools: tools, Timeout: time.Minute},
		append(os.Environ(), helperEnv+"="+mode)
}

func gateFor(t *testing.T, mode string, tools ...string) *HookGate {
	t.Helper()
	h, env := helperHook(mode, tools...)
	g, err := NewHookGate(HookConfig{Hooks: []Hook{h}, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestHookAllows(t *testing.T) {
	if err := gateFor(t, "allow").Check(context.Background(), call(execTool, `{"cmd":"ls"}`, "s")); err != nil {
		t.Fatalf("allowing hook blocked: %v", err)
	}
}

// TestHookAllowsWithBackgroundProcess: a hook that exits 0 allows the call even when a process
// it left in the background still holds its output open (as exec leaves such a process alone);
// it was refused as a hook that "could not run".
func TestHookAllowsWithBackgroundProcess(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(string(b)); err == nil && pid > 0 {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
		}
	})
	h, env := helperHook("allow-bg")
	g, err := NewHookGate(HookConfig{Hooks: []Hook{h}, Env: append(env, helperPidFileEnv+"="+pidFile)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Check(context.Background(), call(execTool, `{"cmd":"ls"}`, "s")); err != nil {
		t.Fatalf("allowing hook blocked: %v", err)
	}
}

func TestHookReceivesCall(t *testing.T) {
	got := reason(gateFor(t, "echo").Check(context.Background(), call(ghCreate, `{"title":"t"}`, "sess-1")))
	var in map[string]any
	if err := json.Unmarshal([]byte(got), &in); err != nil {
		t.Fatalf("reason %q is not the hook input: %v", got, err)
	}
	want := map[string]any{
		"tool":    map[string]any{"id": "mcp:github:create_issue", "name": "mcp__github__create_issue", "source": "mcp"},
		"args":    map[string]any{"title": "t"},
		"session": "sess-1",
	}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("hook input (-want +got):\n%s", diff)
	}
}

func TestHookBlockReasons(t *testing.T) {
	tests := []struct{ mode, want string }{
		{"stderr", "blocked: [31mdestructive[0m command"},
		{"silent", "before-call hook failed (exit status 7)"},
	}
	for _, tt := range tests {
		if got := reason(gateFor(t, tt.mode).Check(context.Background(), call(execTool, `{}`, ""))); got != tt.want {
			t.Errorf("%s: reason = %q, want %q", tt.mode, got, tt.want)
		}
	}
}

func TestHookTimeoutBlocks(t *testing.T) {
	for _, mode := range []string{"hang", "hang-child"} {
		h, env := helperHook(mode)
		h.Timeout = 300 * time.Millisecond
		g, err := NewHookGate(HookConfig{Hooks: []Hook{h}, Env: env})
		if err != nil {
			t.Fatal(err)
		}
		if got := reason(g.Check(context.Background(), call(execTool, `{}`, ""))); got != "before-call hook timed out after 300ms" {
			t.Errorf("%s: reason = %q", mode, got)
		}
	}
}

func TestHookCanceledBlocks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := reason(gateFor(t, "allow").Check(ctx, call(execTool, `{}`, ""))); got != "before-call hook was canceled" {
		t.Errorf("reason = %q", got)
	}
}

func TestHookToolFilter(t *testing.T) {
	// A hook that cannot even start blocks whatever it applies to: so a call that passes proves
	// the hook was skipped.
	g, err := NewHookGate(HookConfig{Hooks: []Hook{{Command: []string{"nodmix-no-such-hook-program"}, Tools: []string{"mcp:*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := g.Check(ctx, call(execTool, `{}`, "")); err != nil {
		t.Fatalf("hook for mcp:* ran on exec: %v", err)
	}
	got := reason(g.Check(ctx, call(fsRead, `{}`, "")))
	if !strings.HasPrefix(got, "before-call hook could not run: ") {
		t.Fatalf("missing program: reason = %q", got)
	}
}

func TestHookFirstBlockWins(t *testing.T) {
	allow, env := helperHook("allow")
	block := Hook{Command: []string{"nodmix-no-such-hook-program"}}
	g, err := NewHookGate(HookConfig{Hooks: []Hook{allow, block}, Env: env, Exempt: func(t *catalog.Tool) bool { return t.Name == "tavily_search" }})
	if err != nil {
		t.Fatal(err)
	}
	if g.Check(context.Background(), call(execTool, `{}`, "")) == nil {
		t.Fatal("second hook did not run")
	}
	if err := g.Check(context.Background(), call(tavilyTool, `{}`, "")); err != nil {
		t.Fatalf("exempt tool hooked: %v", err)
	}
}

func TestHookConfigErrors(t *testing.T) {
	tests := []struct {
		hook Hook
		want string
	}{
		{Hook{}, "tools.hooks.beforeCall[0].command: must be a non-empty array whose first element names the program"},
		{Hook{Command: []string{" "}}, "tools.hooks.beforeCall[0].command: must be a non-empty array whose first element names the program"},
		{Hook{Command: []string{"x"}, Tools: []string{"[x"}}, `tools.hooks.beforeCall[0].tools[0]: "[x" unterminated character class`},
		{Hook{Command: []string{"x"}, Timeout: time.Hour}, "tools.hooks.beforeCall[0].timeoutMs: must be between 1 and 600000"},
	}
	for _, tt := range tests {
		_, err := NewHookGate(HookConfig{Hooks: []Hook{tt.hook}})
		if err == nil || err.Error() != tt.want {
			t.Errorf("%+v: err = %v, want %q", tt.hook, err, tt.want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	long := strings.Repeat("é", 600)
	tests := []struct{ in, want string }{
		{"", ""},
		{"\n\n  \nsecond\nthird", "second"},
		{"a\x00b\r\n", "ab"},
		{long, strings.Repeat("é", 497) + "..."},
	}
	for _, tt := range tests {
		if got := firstLine([]byte(tt.in)); got != tt.want {
			t.Errorf("firstLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
