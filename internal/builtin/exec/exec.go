// Package exec provides the built-in exec (argv) and bash (shell script) tools: run a command with
// a timeout and bounded output capture, and tell the model its output, exit code and how it ended.
//
// # Result contract
//
// Result middleware (tokenjuice) relies on this shape, so it is part of the package's API:
//
//   - Content[0] is the captured output (stdout and stderr combined in the order written), or
//     "(no output)"; when the middle was dropped it holds a line "[... N bytes (L lines) omitted ...]".
//   - Content[1] is one status line in brackets, e.g. "[exit code 0 | 0.42s]" or
//     "[timed out after 5s; process group killed | 5.00s]".
//   - Structured is a JSON object (see [Report]) with at least "command" (string: the bash script,
//     or exec's argv shell-quoted), "exit_code" (int, -1 when there is none), "output" (string,
//     equal to Content[0] unless it is "(no output)") and the flags "timed_out", "truncated".
//
// A command that could not be started (not found, bad cwd) has one part only,
// "Command did not start: <reason>", with the reason in Structured's "error".
//
// A non-zero exit code is a normal result (IsError false): grep finding nothing or a failing test
// is information the model acts on, not a malfunction of the tool. IsError is set when the command
// could not be started, timed out, was cancelled or was killed by a signal.
package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/catalog"
)

// Tool ids and names.
const (
	ExecName = "exec"
	BashName = "bash"
	ExecID   = "nodmix:core:exec"
	BashID   = "nodmix:core:bash"
)

// Defaults of Options.
const (
	DefaultTimeout        = 120 * time.Second
	DefaultMaxTimeout     = 1800 * time.Second
	DefaultMaxOutputBytes = 1 << 20
	DefaultWaitDelay      = 2 * time.Second
)

// Options configure both tools. Zero fields take the defaults above.
type Options struct {
	DefaultTimeout time.Duration // when the call gives no timeout
	MaxTimeout     time.Duration // the largest timeout a call may ask for
	MaxOutputBytes int           // output kept per call: half head, half tail
	// WaitDelay bounds the wait for the output pipe after the command exits, for when a process it
	// started in the background still holds the pipe.
	WaitDelay time.Duration
	// Environ returns the base environment of commands; nil means os.Environ.
	Environ func() []string
	// Withhold names variables of the base environment that commands do not get: the ones
	// nodmix reads its own secrets from (API keys, tokens), which a model could otherwise print
	// with `echo $TAVILY_API_KEY`.
	Withhold []string
	// Env, when set, returns NAME=VALUE pairs every command gets on top of the base environment
	// (withheld names included: this is how one is passed on purpose). It is called for each
	// command, so a key that changes is picked up; an error stops the command from starting.
	Env func() ([]string, error)
	Log *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = DefaultMaxTimeout
	}
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = DefaultTimeout
	}
	o.DefaultTimeout = min(o.DefaultTimeout, o.MaxTimeout)
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.WaitDelay <= 0 {
		o.WaitDelay = DefaultWaitDelay
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// environ is the environment of a command before its call's own env: the base environment
// without the withheld variables, then Env.
func (o *Options) environ() ([]string, error) {
	base := os.Environ
	if o.Environ != nil {
		base = o.Environ
	}
	env := base()
	if len(o.Withhold) > 0 {
		env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
			name, _, _ := strings.Cut(kv, "=")
			return slices.Contains(o.Withhold, name)
		})
	}
	if o.Env == nil {
		return env, nil
	}
	extra, err := o.Env()
	if err != nil {
		return nil, err
	}
	return mergeEnv(env, extra), nil
}

// mergeEnv applies overrides (KEY=VALUE) to base; later keys win, base order is kept.
func mergeEnv(base, overrides []string) []string {
	if len(overrides) == 0 {
		return base
	}
	over := make(map[string]string, len(overrides))
	for _, kv := range overrides {
		k, _, _ := strings.Cut(kv, "=")
		over[k] = kv
	}
	out := make([]string, 0, len(base)+len(overrides))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := over[k]; ok {
			continue
		}
		out = append(out, kv)
	}
	return append(out, overrides...)
}

// Tools returns the catalog entries of exec and bash (essential, built-in, owner "core").
func Tools(opts Options) []catalog.Entry {
	o := opts.withDefaults()
	return []catalog.Entry{
		entry(ExecName, "Exec", execDescription(&o), schema(true, &o), &executor{opts: &o}),
		entry(BashName, "Bash", bashDescription(&o), schema(false, &o), &executor{opts: &o, shell: true}),
	}
}

func entry(name, label, desc string, schema json.RawMessage, ex catalog.Executor) catalog.Entry {
	return catalog.Entry{
		Tool: catalog.Tool{
			ID:          catalog.ID(catalog.SourceBuiltin, "core", name),
			Name:        name,
			Label:       label,
			Description: desc,
			InputSchema: schema,
			Source:      catalog.SourceBuiltin,
			Owner:       "core",
			LoadMode:    catalog.Essential,
		},
		Exec: ex,
	}
}

func commonDescription(o *Options) string {
	return fmt.Sprintf(" Returns stdout and stderr combined in the order they were written, then a status line "+
		"with the exit code and duration. A non-zero exit code is reported in that line, not as a tool error. "+
		"Stdin is empty, so interactive programs get end-of-file. The default timeout is %s seconds (at most %s); "+
		"on timeout the command and every process it started are killed. Output beyond %s keeps its beginning "+
		"and end, and says how much was omitted in between.",
		trimFloat(o.DefaultTimeout.Seconds()), trimFloat(o.MaxTimeout.Seconds()), humanBytes(int64(o.MaxOutputBytes)))
}

func execDescription(o *Options) string {
	return `Run a program directly, without a shell: command is the argv array, e.g. ["git", "status", "--short"]. ` +
		"No globbing, pipes, redirection or variable expansion happens; use bash for those." + commonDescription(o)
}

func bashDescription(o *Options) string {
	return `Run a bash script with "bash -c": pipes, redirection, globs, && chains and loops work, e.g. "go test ./... 2>&1 | tail -50".` +
		commonDescription(o)
}

func schema(argv bool, o *Options) json.RawMessage {
	var command any
	if argv {
		command = map[string]any{
			"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1,
			"description": `The program and its arguments, e.g. ["ls", "-la", "src"].`,
		}
	} else {
		command = map[string]any{
			"type": "string", "minLength": 1,
			"description": "The bash script to run.",
		}
	}
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"command": command,
			"cwd": map[string]any{
				"type": "string", "description": "Working directory; defaults to the gateway's working directory.",
			},
			"env": map[string]any{
				"type": "object", "additionalProperties": map[string]any{"type": "string"},
				"description": "Extra environment variables, added to (or replacing) the inherited ones.",
			},
			"timeout": map[string]any{
				"type": "number", "exclusiveMinimum": 0, "maximum": o.MaxTimeout.Seconds(),
				"description": fmt.Sprintf("Timeout in seconds (default %s).", trimFloat(o.DefaultTimeout.Seconds())),
			},
		},
		"required":             []string{"command"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(s)
	return b
}

// executor runs one of the two tools. It is safe for concurrent use: every call has its own process
// and capture.
type executor struct {
	opts  *Options
	shell bool
}

var _ catalog.Executor = (*executor)(nil)

// Execute runs the command. Bad arguments and commands that cannot start are error results; it
// never returns a Go error.
func (e *executor) Execute(ctx context.Context, call catalog.Call) (*catalog.Result, error) {
	req, err := parseArgs(call.Args, e.shell, e.opts.DefaultTimeout, e.opts.MaxTimeout)
	if err != nil {
		return catalog.ErrorResult("Invalid arguments: " + err.Error()), nil
	}
	out := run(ctx, req, e.opts)
	rep := report(req, &out)
	e.opts.Log.Debug("command finished", "tool", call.Tool.Name, "program", req.argv[0],
		"exit_code", rep.ExitCode, "timed_out", rep.TimedOut, "output_bytes", rep.OutputBytes,
		"duration", out.duration)
	return rep.result(), nil
}

// outcome is how one run ended.
type outcome struct {
	snap     snapshot
	exitCode int    // -1 when the process has no exit code (signal, spawn failure)
	signal   string // e.g. "SIGKILL", when a signal ended the process
	timedOut bool
	canceled bool
	pipeHeld bool  // a process that outlived the command kept the output pipe open
	spawnErr error // the command could not be started
	duration time.Duration
}

// Report is the Structured content of an exec or bash result.
type Report struct {
	Command      string   `json:"command"`
	Argv         []string `json:"argv,omitempty"` // exec only
	Cwd          string   `json:"cwd,omitempty"`
	ExitCode     int      `json:"exit_code"`
	Signal       string   `json:"signal,omitempty"`
	TimedOut     bool     `json:"timed_out"`
	Canceled     bool     `json:"canceled,omitempty"`
	Truncated    bool     `json:"truncated"`
	OutputBytes  int64    `json:"output_bytes"`            // what the command wrote
	OmittedBytes int64    `json:"omitted_bytes,omitempty"` // dropped from the middle
	Binary       bool     `json:"binary,omitempty"`
	PipeHeld     bool     `json:"pipe_held,omitempty"` // a background process kept the output open
	DurationMs   int64    `json:"duration_ms"`
	Error        string   `json:"error,omitempty"` // why the command did not start
	Output       string   `json:"output"`

	timeout time.Duration
}

func report(req *request, o *outcome) *Report {
	r := &Report{
		Command:      req.command,
		Cwd:          req.cwd,
		ExitCode:     o.exitCode,
		Signal:       o.signal,
		TimedOut:     o.timedOut,
		Canceled:     o.canceled,
		Truncated:    o.snap.omittedBytes > 0,
		OutputBytes:  o.snap.total,
		OmittedBytes: o.snap.omittedBytes,
		PipeHeld:     o.pipeHeld,
		DurationMs:   o.duration.Milliseconds(),
		timeout:      req.timeout,
	}
	if !req.shell {
		r.Argv = req.argv
	}
	if o.spawnErr != nil {
		r.Error = o.spawnErr.Error()
		return r
	}
	r.Output, r.Binary = renderOutput(&o.snap)
	return r
}

// renderOutput turns the kept bytes into text for the model. Binary output is replaced by a note:
// its bytes would only cost tokens. Invalid UTF-8 becomes U+FFFD; CRLF and ANSI escapes are left
// as the command wrote them (result middleware may clean them).
func renderOutput(s *snapshot) (string, bool) {
	if isBinary(s.head) || isBinary(s.tail) {
		return fmt.Sprintf("[binary output: %s bytes, not shown; redirect it to a file, or inspect it with a tool such as `xxd | head`]",
			group(s.total)), true
	}
	var b strings.Builder
	b.Grow(len(s.head) + len(s.tail) + 64)
	b.WriteString(strings.ToValidUTF8(string(s.head), "\uFFFD"))
	if s.omittedBytes > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[... %s bytes (%s lines) omitted ...]\n", group(s.omittedBytes), group(s.omittedLines))
		b.WriteString(strings.ToValidUTF8(string(s.tail), "\uFFFD"))
	}
	return b.String(), false
}

// isBinary reports whether b looks like binary data rather than text: a NUL byte, or more than
// 10% of its first 8 KiB invalid UTF-8 or control characters other than whitespace and ESC.
func isBinary(b []byte) bool {
	if len(b) > 8192 {
		b = b[:8192]
	}
	bad := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0 {
			return true
		}
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\b' && c != 0x1b || c == 0x7f {
				bad++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 && (len(b)-i >= utf8.UTFMax || utf8.FullRune(b[i:])) {
			bad++
		}
		i += n
	}
	return bad*10 > len(b)
}

// result renders the report for the model, following the contract in the package doc.
func (r *Report) result() *catalog.Result {
	data, _ := json.Marshal(r)
	if r.Error != "" {
		return &catalog.Result{
			Content:    []catalog.Content{{Type: "text", Text: "Command did not start: " + r.Error}},
			Structured: data,
			IsError:    true,
		}
	}
	text := r.Output
	if text == "" {
		text = "(no output)"
	}
	return &catalog.Result{
		Content:    []catalog.Content{{Type: "text", Text: text}, {Type: "text", Text: r.StatusLine()}},
		Structured: data,
		IsError:    r.TimedOut || r.Canceled || r.Signal != "",
	}
}

// StatusLine is the bracketed line that follows the output.
func (r *Report) StatusLine() string {
	var parts []string
	switch {
	case r.TimedOut:
		parts = append(parts, fmt.Sprintf("timed out after %ss; process group killed", trimFloat(r.timeout.Seconds())))
	case r.Canceled:
		parts = append(parts, "cancelled; process group killed")
	case r.Signal != "":
		parts = append(parts, "killed by signal "+r.Signal)
	default:
		parts = append(parts, fmt.Sprintf("exit code %d", r.ExitCode))
	}
	parts = append(parts, fmt.Sprintf("%.2fs", float64(r.DurationMs)/1000))
	if r.Truncated {
		parts = append(parts, fmt.Sprintf("output truncated: %s bytes written, %s omitted in the middle",
			group(r.OutputBytes), group(r.OmittedBytes)))
	}
	if r.PipeHeld {
		parts = append(parts, "a background process kept the output open; later output not captured")
	}
	return "[" + strings.Join(parts, " | ") + "]"
}

// group formats n with thousands separators.
func group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
