//go:build unix

package exec

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nodmix/nodmix/internal/catalog"
)

func tools(t *testing.T, o Options) (execTool, bashTool catalog.Entry) {
	t.Helper()
	ts := Tools(o)
	if len(ts) != 2 {
		t.Fatalf("Tools returned %d entries", len(ts))
	}
	return ts[0], ts[1]
}

func call(t *testing.T, ctx context.Context, e catalog.Entry, args any) (*catalog.Result, *Report) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Exec.Execute(ctx, catalog.Call{Tool: &e.Tool, Args: raw})
	if err != nil {
		t.Fatalf("Execute returned a Go error: %v", err)
	}
	var rep Report
	if len(res.Structured) > 0 {
		if err := json.Unmarshal(res.Structured, &rep); err != nil {
			t.Fatalf("structured content is not a Report: %v", err)
		}
	}
	return res, &rep
}

func TestToolsDescribeThemselves(t *testing.T) {
	ex, sh := tools(t, Options{})
	for _, e := range []catalog.Entry{ex, sh} {
		if e.Tool.LoadMode != catalog.Essential || e.Tool.Source != catalog.SourceBuiltin || e.Tool.Owner != "core" {
			t.Errorf("%s: load mode %v, source %v, owner %q", e.Tool.ID, e.Tool.LoadMode, e.Tool.Source, e.Tool.Owner)
		}
		var s map[string]any
		if err := json.Unmarshal(e.Tool.InputSchema, &s); err != nil {
			t.Errorf("%s: schema: %v", e.Tool.ID, err)
		}
		if !catalog.ValidName(e.Tool.Name) || e.Tool.Description == "" {
			t.Errorf("%s: bad name or empty description", e.Tool.ID)
		}
	}
	if ex.Tool.ID != ExecID || sh.Tool.ID != BashID {
		t.Errorf("ids = %s, %s", ex.Tool.ID, sh.Tool.ID)
	}
}

func TestRunOutcomes(t *testing.T) {
	ex, sh := tools(t, Options{})
	tests := []struct {
		name    string
		tool    catalog.Entry
		args    map[string]any
		want    Report // compared on the fields below
		isError bool
		status  string // prefix of the status line
	}{
		{
			name: "exec argv", tool: ex, args: map[string]any{"command": []string{"echo", "hello world"}},
			want:   Report{Command: "echo 'hello world'", Argv: []string{"echo", "hello world"}, Output: "hello world\n", OutputBytes: 12},
			status: "[exit code 0 | ",
		},
		{
			name: "stdout and stderr keep their order", tool: sh,
			args:   map[string]any{"command": "echo one; echo two >&2; echo three; echo four >&2"},
			want:   Report{Command: "echo one; echo two >&2; echo three; echo four >&2", Output: "one\ntwo\nthree\nfour\n", OutputBytes: 19},
			status: "[exit code 0 | ",
		},
		{
			name: "non-zero exit is a normal result", tool: sh, args: map[string]any{"command": "echo failing; exit 3"},
			want:   Report{Command: "echo failing; exit 3", ExitCode: 3, Output: "failing\n", OutputBytes: 8},
			status: "[exit code 3 | ",
		},
		{
			name: "killed by a signal", tool: sh, args: map[string]any{"command": "echo before; kill -SEGV $$"},
			want:    Report{Command: "echo before; kill -SEGV $$", ExitCode: -1, Signal: "SIGSEGV", Output: "before\n", OutputBytes: 7},
			isError: true, status: "[killed by signal SIGSEGV | ",
		},
		{
			name: "binary output is described, not shown", tool: sh, args: map[string]any{"command": `printf 'PK\003\004\000\000binary'`},
			want: Report{Command: `printf 'PK\003\004\000\000binary'`, Binary: true, OutputBytes: 12,
				Output: "[binary output: 12 bytes, not shown; redirect it to a file, or inspect it with a tool such as `xxd | head`]"},
			status: "[exit code 0 | ",
		},
		{
			name: "invalid UTF-8 becomes U+FFFD", tool: sh, args: map[string]any{"command": `printf 'caf\351 au lait is coffee with hot milk\n'`},
			want:   Report{Command: `printf 'caf\351 au lait is coffee with hot milk\n'`, Output: "caf\uFFFD au lait is coffee with hot milk\n", OutputBytes: 37},
			status: "[exit code 0 | ",
		},
		{
			name: "CRLF is kept as written", tool: sh, args: map[string]any{"command": `printf 'a\r\nb\r\n'`},
			want:   Report{Command: `printf 'a\r\nb\r\n'`, Output: "a\r\nb\r\n", OutputBytes: 6},
			status: "[exit code 0 | ",
		},
		{
			name: "env and cwd", tool: sh, args: map[string]any{"command": `echo "$NODMIX_T_VAR $(pwd)"`, "env": map[string]string{"NODMIX_T_VAR": "v1"}, "cwd": "/"},
			want:   Report{Command: `echo "$NODMIX_T_VAR $(pwd)"`, Cwd: "/", Output: "v1 /\n", OutputBytes: 5},
			status: "[exit code 0 | ",
		},
		{
			name: "command not found", tool: ex, args: map[string]any{"command": []string{"nodmix-no-such-program"}},
			want:    Report{Command: "nodmix-no-such-program", Argv: []string{"nodmix-no-such-program"}, ExitCode: -1, Error: `command not found: "nodmix-no-such-program" is not in PATH`},
			isError: true,
		},
		{
			name: "missing cwd", tool: ex, args: map[string]any{"command": []string{"true"}, "cwd": "/nonexistent-nodmix-dir"},
			want: Report{Command: "true", Argv: []string{"true"}, Cwd: "/nonexistent-nodmix-dir", ExitCode: -1,
				Error: `cwd: "/nonexistent-nodmix-dir": no such directory`},
			isError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, rep := call(t, context.Background(), tt.tool, tt.args)
			if diff := cmp.Diff(tt.want, *rep, cmpopts.IgnoreUnexported(Report{}), cmpopts.IgnoreFields(Report{}, "DurationMs")); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v", res.IsError, tt.isError)
			}
			if tt.status != "" {
				if len(res.Content) != 2 || !strings.HasPrefix(res.Content[1].Text, tt.status) {
					t.Errorf("status line = %q, want prefix %q", res.Content[len(res.Content)-1].Text, tt.status)
				}
				if res.Content[0].Text != tt.want.Output && !(tt.want.Output == "" && res.Content[0].Text == "(no output)") {
					t.Errorf("content[0] = %q, want the output", res.Content[0].Text)
				}
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	ex, sh := tools(t, Options{MaxTimeout: 60 * time.Second})
	tests := []struct {
		name string
		tool catalog.Entry
		args string
		want string
	}{
		{"missing command", sh, `{}`, "Invalid arguments: command: required"},
		{"exec with a string", ex, `{"command":"ls -la"}`, `Invalid arguments: command: must be an array of strings (argv), e.g. ["git", "status"]; use bash for a shell command line`},
		{"bash with an array", sh, `{"command":["ls"]}`, "Invalid arguments: command: must be a string (a bash script); exec takes an argv array"},
		{"empty script", sh, `{"command":"  "}`, "Invalid arguments: command: must not be empty"},
		{"empty argv", ex, `{"command":[]}`, "Invalid arguments: command: must name a program in its first element"},
		{"unknown field", sh, `{"command":"ls","workdir":"/"}`, "Invalid arguments: workdir: unknown field (allowed: command, cwd, env, timeout)"},
		{"timeout too large", sh, `{"command":"ls","timeout":61}`, "Invalid arguments: timeout: must be greater than 0 and at most 60 seconds"},
		{"timeout zero", sh, `{"command":"ls","timeout":0}`, "Invalid arguments: timeout: must be greater than 0 and at most 60 seconds"},
		{"timeout string", sh, `{"command":"ls","timeout":"5"}`, "Invalid arguments: timeout: must be a number of seconds"},
		{"env not strings", sh, `{"command":"ls","env":{"A":1}}`, `Invalid arguments: env: must be an object of string values, e.g. {"CI": "1"}`},
		{"env bad key", sh, `{"command":"ls","env":{"A=B":"1"}}`, `Invalid arguments: env: key "A=B" must be non-empty and contain no '=' or NUL`},
		{"cwd number", sh, `{"command":"ls","cwd":3}`, "Invalid arguments: cwd: must be a string (a directory path)"},
		{"not an object", sh, `[1]`, "Invalid arguments: arguments must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.tool.Exec.Execute(context.Background(), catalog.Call{Tool: &tt.tool.Tool, Args: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Text() != tt.want {
				t.Errorf("got IsError=%v %q, want %q", res.IsError, res.Text(), tt.want)
			}
		})
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no procfs: trust kill(0)
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

// waitGone waits until pid has gone away; the process was SIGKILLed, so only reaping is pending.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for range 500 {
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d outlived the call", pid)
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	_, sh := tools(t, Options{})
	// The background sleep is a grandchild holding the output pipe: without the group kill the call
	// would wait for it.
	res, rep := call(t, context.Background(), sh, map[string]any{
		"command": "sleep 60 & echo $!; sleep 60", "timeout": 0.5,
	})
	if !rep.TimedOut || !res.IsError || rep.Signal != "SIGKILL" {
		t.Fatalf("timed_out=%v isError=%v signal=%q", rep.TimedOut, res.IsError, rep.Signal)
	}
	if got := res.Content[1].Text; !strings.HasPrefix(got, "[timed out after 0.5s; process group killed | ") {
		t.Errorf("status line = %q", got)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(rep.Output))
	if err != nil {
		t.Fatalf("output %q is not the grandchild's pid", rep.Output)
	}
	waitGone(t, pid)
}

func TestCancellationKillsTheProcessGroup(t *testing.T) {
	_, sh := tools(t, Options{})
	ready := filepath.Join(t.TempDir(), "ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	var res *catalog.Result
	var rep *Report
	go func() {
		defer close(done)
		res, rep = call(t, ctx, sh, map[string]any{"command": "sleep 60 & echo $! > " + ready + ".tmp && mv " + ready + ".tmp " + ready + "; sleep 60"})
	}()
	var pid int
	for range 1000 {
		if data, err := os.ReadFile(ready); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if pid == 0 {
		t.Fatal("the command never became ready")
	}
	if !rep.Canceled || !res.IsError || rep.TimedOut {
		t.Errorf("canceled=%v isError=%v timedOut=%v", rep.Canceled, res.IsError, rep.TimedOut)
	}
	waitGone(t, pid)
}

func TestBackgroundProcessHoldingThePipe(t *testing.T) {
	_, sh := tools(t, Options{WaitDelay: 100 * time.Millisecond})
	res, rep := call(t, context.Background(), sh, map[string]any{"command": "sleep 60 & echo $!"})
	pid, err := strconv.Atoi(strings.TrimSpace(rep.Output))
	if err != nil {
		t.Fatalf("output %q", rep.Output)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGKILL) }() // the sleeper is ours; the call leaves daemons alone
	if !rep.PipeHeld || rep.ExitCode != 0 || res.IsError {
		t.Errorf("pipe_held=%v exit=%d isError=%v", rep.PipeHeld, rep.ExitCode, res.IsError)
	}
	if !strings.Contains(res.Content[1].Text, "a background process kept the output open") {
		t.Errorf("status line = %q", res.Content[1].Text)
	}
}

func TestHugeOutputIsBounded(t *testing.T) {
	const limit = 64 << 10
	_, sh := tools(t, Options{MaxOutputBytes: limit})
	t.Run("endless stream with a timeout", func(t *testing.T) {
		res, rep := call(t, context.Background(), sh, map[string]any{"command": "yes 'y-line'", "timeout": 0.3})
		if !rep.TimedOut || !rep.Truncated || rep.OutputBytes <= limit {
			t.Fatalf("timed_out=%v truncated=%v bytes=%d", rep.TimedOut, rep.Truncated, rep.OutputBytes)
		}
		if len(rep.Output) > limit+200 {
			t.Errorf("kept %d bytes, cap is %d", len(rep.Output), limit)
		}
		if !strings.Contains(rep.Output, "lines) omitted ...]\ny-line\n") || !strings.HasPrefix(rep.Output, "y-line\n") {
			t.Errorf("output does not show head, marker and tail on line boundaries")
		}
		if !strings.Contains(res.Content[1].Text, "output truncated: ") {
			t.Errorf("status line = %q", res.Content[1].Text)
		}
	})
	t.Run("2 GiB", func(t *testing.T) {
		if testing.Short() {
			t.Skip("streams 2 GiB")
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, rep := call(t, context.Background(), sh, map[string]any{"command": "head -c 2G /dev/zero", "timeout": 600})
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
			t.Errorf("allocated %d MiB while streaming 2 GiB; memory must stay flat", grew>>20)
		}
		// NUL bytes: the output is reported as binary, with its true size.
		if rep.OutputBytes != 2<<30 || !rep.Truncated || rep.OmittedBytes != 2<<30-limit || rep.ExitCode != 0 || !rep.Binary {
			t.Fatalf("bytes=%d omitted=%d truncated=%v exit=%d binary=%v", rep.OutputBytes, rep.OmittedBytes, rep.Truncated, rep.ExitCode, rep.Binary)
		}
		if len(rep.Output) > limit+200 {
			t.Errorf("kept %d bytes", len(rep.Output))
		}
	})
}

func TestQuoteArgv(t *testing.T) {
	got := quoteArgv([]string{"git", "commit", "-m", "it's done", "", "a/b.go", "$HOME"})
	want := `git commit -m 'it'\''s done' '' a/b.go '$HOME'`
	if got != want {
		t.Errorf("quoteArgv = %s, want %s", got, want)
	}
}

// TestExpiryAfterExitIsNotATimeout: a command that exits on its own before its timeout, leaving a
// background process that holds the pipe past the timeout (or past a cancellation), was not
// killed and must not be reported as timed out or cancelled: its group lives on. Should the
// command be slow enough to meet its deadline, the group is killed, and the report says so.
func TestExpiryAfterExitIsNotATimeout(t *testing.T) {
	_, sh := tools(t, Options{WaitDelay: 1500 * time.Millisecond})
	for _, tc := range []struct {
		name   string
		cancel bool
	}{
		{"timeout", false},
		{"cancellation", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			args := map[string]any{"command": "sleep 30 & echo $!; echo $$ > " + dir + "/sh", "timeout": 0.5}
			if tc.cancel {
				args["timeout"] = 60
				go func() {
					// Cancel once the shell itself has ended; the sleeper still holds the pipe.
					for {
						if b, err := os.ReadFile(dir + "/sh"); err == nil && strings.HasSuffix(string(b), "\n") {
							if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 && !alive(pid) {
								cancel()
								return
							}
						}
						if ctx.Err() != nil {
							return
						}
						time.Sleep(5 * time.Millisecond)
					}
				}()
			}
			res, rep := call(t, ctx, sh, args)
			pid, err := strconv.Atoi(strings.TrimSpace(rep.Output))
			if err != nil {
				t.Fatalf("output %q is not the sleeper's pid", rep.Output)
			}
			defer func() { _ = syscall.Kill(pid, syscall.SIGKILL) }()
			if rep.TimedOut || rep.Canceled {
				// The deadline or the cancellation met the shell alive: then the group is gone.
				waitGone(t, pid)
				return
			}
			if !alive(pid) {
				t.Errorf("the sleeper is gone, but the report says the command ended on its own: %s", res.Content[1].Text)
			}
			if rep.ExitCode != 0 || res.IsError || !rep.PipeHeld {
				t.Errorf("exit=%d isError=%v pipe_held=%v, status %s", rep.ExitCode, res.IsError, rep.PipeHeld, res.Content[1].Text)
			}
		})
	}
}

// TestDoneBeforeStart: a call whose context is done before the command could start reports the
// cancellation or the timeout, not a command that cannot start.
func TestDoneBeforeStart(t *testing.T) {
	ex, _ := tools(t, Options{})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		args   map[string]any
		want   Report
		status string
	}{
		{
			name: "cancelled", ctx: cancelled, args: map[string]any{"command": []string{"true"}},
			want:   Report{Command: "true", Argv: []string{"true"}, ExitCode: -1, Canceled: true},
			status: "[cancelled; process group killed | ",
		},
		{
			// A timeout this small is below a nanosecond: it has expired before the start.
			name: "timeout", ctx: context.Background(), args: map[string]any{"command": []string{"true"}, "timeout": 1e-10},
			want:   Report{Command: "true", Argv: []string{"true"}, ExitCode: -1, TimedOut: true},
			status: "[timed out after 0s; process group killed | ",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, rep := call(t, tc.ctx, ex, tc.args)
			if diff := cmp.Diff(tc.want, *rep, cmpopts.IgnoreUnexported(Report{}), cmpopts.IgnoreFields(Report{}, "DurationMs")); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if !res.IsError || len(res.Content) != 2 || !strings.HasPrefix(res.Content[1].Text, tc.status) {
				t.Errorf("isError=%v content=%q, want status prefix %q", res.IsError, res.Content, tc.status)
			}
		})
	}
}
