package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/session"
	"github.com/nodmix/nodmix/internal/session/sessiontest"
	"github.com/nodmix/nodmix/internal/session/sqlite"
)

// The -update flag may be declared by another test file of this package as well.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// run executes the command line in home and returns stdout, stderr and the exit code.
func run(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"HOME": home, "NODMIX_HOME": filepath.Join(home, ".nodmix")}
	code := Execute(context.Background(), Env{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }})
	return out.String(), errb.String(), code
}

var stamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

func golden(t *testing.T, name, got string) {
	t.Helper()
	got = stamps.ReplaceAllString(got, "<time>")
	path := filepath.Join("testdata", "sessions", name)
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func seedSessions(t *testing.T, home string) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(home, ".nodmix", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(ctx, "other", 0, sessiontest.Transcript()[:1]); err != nil {
		t.Fatal(err)
	}
	long := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		{Kind: llm.KindToolCall, Name: "exec", Args: json.RawMessage(`{"command": "` + strings.Repeat("x", 300) + `"}`)},
		{Kind: llm.KindText, Text: "two\nlines\n"},
	}}
	if _, err := s.Append(ctx, "main", 0, append(sessiontest.Transcript(), long)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "main", func(in *session.Info) error {
		in.Model = "anthropic/claude-sonnet-4-5"
		in.Overrides["thinking"] = "high"
		in.Overrides["fast"] = "on"
		in.Counters["model_calls"] = 3
		in.Counters["input_tokens"] = 1200
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBlob(ctx, "main", "raw-1", []byte("kept output")); err != nil {
		t.Fatal(err)
	}
}

func TestSessionsCommand(t *testing.T) {
	home := t.TempDir()
	if out, _, code := run(t, home, "sessions", "list"); code != 0 || out != "no sessions\n" {
		t.Errorf("list of an empty store: %q, exit %d", out, code)
	}
	if out, _, code := run(t, home, "sessions", "list", "--json"); code != 0 || out != "[]\n" {
		t.Errorf("list --json of an empty store: %q, exit %d", out, code)
	}
	seedSessions(t, home)

	out, errOut, code := run(t, home, "sessions", "list")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	golden(t, "list.txt", out)

	out, _, _ = run(t, home, "sessions", "list", "--json")
	var infos []session.Info
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if len(infos) != 2 || infos[0].Key != "main" || infos[0].Messages != 6 || infos[0].Overrides["thinking"] != "high" || infos[1].Key != "other" {
		t.Errorf("list --json = %+v", infos)
	}

	out, errOut, code = run(t, home, "sessions", "show", "main")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	golden(t, "show.txt", out)

	out, _, _ = run(t, home, "sessions", "show", "main", "--json")
	var shown struct {
		Session  session.Info      `json:"session"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("show --json: %v\n%s", err, out)
	}
	if shown.Session.Key != "main" || shown.Session.Counters["model_calls"] != 3 || len(shown.Messages) != 6 {
		t.Errorf("show --json = %+v with %d messages", shown.Session, len(shown.Messages))
	}
	var assistant llm.Message
	if err := json.Unmarshal(shown.Messages[1], &assistant); err != nil {
		t.Fatal(err)
	}
	var sig struct{ Signature string }
	if err := json.Unmarshal(assistant.Parts[0].Raw, &sig); err != nil || sig.Signature != "a<b&c" {
		t.Errorf("reasoning raw in show --json: %s (%v)", assistant.Parts[0].Raw, err)
	}
	if got := string(assistant.Parts[4].Args); got != `"{\"query\": \"unterminated"` {
		t.Errorf("broken arguments in show --json = %s, want them as a JSON string", got)
	}
	if !strings.Contains(out, `"parts": []`) {
		t.Errorf("a message without parts is not shown with an empty list:\n%s", out)
	}

	for _, args := range [][]string{{"show", "nope"}, {"rm", "nope"}, {"show", "nope", "--json"}} {
		out, errOut, code := run(t, home, append([]string{"sessions"}, args...)...)
		if code != ExitFailure || out != "" || errOut != "nodmix: session \"nope\": not found\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"show"}, {"show", ""}, {"rm", strings.Repeat("k", 300)}, {"list", "x"}, {"frob"}} {
		if _, errOut, code := run(t, home, append([]string{"sessions"}, args...)...); code != ExitUsage {
			t.Errorf("%v: exit %d (%s), want %d", args, code, errOut, ExitUsage)
		}
	}

	if out, _, code := run(t, home, "sessions", "rm", "other"); code != 0 || out != "removed other\n" {
		t.Errorf("rm: %q, exit %d", out, code)
	}
	if out, _, code := run(t, home, "sessions", "rm", "main", "--json"); code != 0 || out != "{\n  \"removed\": \"main\"\n}\n" {
		t.Errorf("rm --json: %q, exit %d", out, code)
	}
	if out, _, _ := run(t, home, "sessions", "list"); out != "no sessions\n" {
		t.Errorf("list after rm: %q", out)
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(home, ".nodmix", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Blob(context.Background(), "raw-1"); err == nil {
		t.Error("rm kept the session's blob")
	}
}

// TestSessionsShowStripsTerminalControls: what a model or a tool put in a transcript cannot
// drive the terminal of the person reading it: C1 controls (U+0080–U+009F, such as the
// one-character CSI U+009B, which terminals honour in UTF-8) go like C0 ones.
func TestSessionsShowStripsTerminalControls(t *testing.T) {
	home := t.TempDir()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(home, ".nodmix", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	hostile := "a\x1b[2Jb\u009b2Jc\u009d0;pwned\u0007d\u0085e"
	if _, err := s.Append(ctx, "k", 0, []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: hostile}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.KindToolCall, Name: "x\u009by", Args: json.RawMessage(`{}`)}}},
		{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, Name: "x", Text: hostile}}},
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, args := range [][]string{{"sessions", "show", "k"}, {"sessions", "list"}} {
		out, errOut, code := run(t, home, args...)
		if code != ExitOK {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		checkNoControls(t, fmt.Sprintf("%q", args), out)
	}
}
