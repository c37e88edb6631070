package exec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// request is one validated call of exec or bash.
type request struct {
	argv    []string // the program and its arguments (bash: "bash", "-c", script)
	command string   // what the model asked for, as text: the script, or argv shell-quoted
	cwd     string
	env     []string // KEY=VALUE overrides, sorted by key
	timeout time.Duration
	shell   bool
}

// argsError is bad input from the model. Its text names the field and the rule.
type argsError struct{ msg string }

func (e *argsError) Error() string { return e.msg }

func badArgs(format string, a ...any) error { return &argsError{msg: fmt.Sprintf(format, a...)} }

var allowedFields = []string{"command", "cwd", "env", "timeout"}

// parseArgs decodes and validates the arguments of exec (shell=false) or bash (shell=true).
func parseArgs(raw json.RawMessage, shell bool, def, maxTimeout time.Duration) (*request, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, badArgs("arguments must be a JSON object")
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(allowedFields, k) {
			return nil, badArgs("%s: unknown field (allowed: %s)", k, strings.Join(allowedFields, ", "))
		}
	}
	r := &request{timeout: def, shell: shell}
	cmd, ok := fields["command"]
	if !ok || isNull(cmd) {
		return nil, badArgs("command: required")
	}
	if shell {
		var script string
		if json.Unmarshal(cmd, &script) != nil {
			return nil, badArgs("command: must be a string (a bash script); exec takes an argv array")
		}
		if strings.TrimSpace(script) == "" {
			return nil, badArgs("command: must not be empty")
		}
		if strings.IndexByte(script, 0) >= 0 {
			return nil, badArgs("command: must not contain NUL bytes")
		}
		r.command = script
		r.argv = []string{"bash", "-c", script}
	} else {
		var argv []string
		if json.Unmarshal(cmd, &argv) != nil {
			return nil, badArgs("command: must be an array of strings (argv), e.g. [\"git\", \"status\"]; use bash for a shell command line")
		}
		if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
			return nil, badArgs("command: must name a program in its first element")
		}
		for i, a := range argv {
			if strings.IndexByte(a, 0) >= 0 {
				return nil, badArgs("command[%d]: must not contain NUL bytes", i)
			}
		}
		r.argv = argv
		r.command = quoteArgv(argv)
	}
	if v, ok := fields["cwd"]; ok && !isNull(v) {
		if json.Unmarshal(v, &r.cwd) != nil {
			return nil, badArgs("cwd: must be a string (a directory path)")
		}
		if strings.IndexByte(r.cwd, 0) >= 0 {
			return nil, badArgs("cwd: must not contain NUL bytes")
		}
	}
	if v, ok := fields["env"]; ok && !isNull(v) {
		var env map[string]string
		if json.Unmarshal(v, &env) != nil {
			return nil, badArgs("env: must be an object of string values, e.g. {\"CI\": \"1\"}")
		}
		for _, k := range slices.Sorted(maps.Keys(env)) {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return nil, badArgs("env: key %q must be non-empty and contain no '=' or NUL", k)
			}
			if strings.IndexByte(env[k], 0) >= 0 {
				return nil, badArgs("env.%s: must not contain NUL bytes", k)
			}
			r.env = append(r.env, k+"="+env[k])
		}
	}
	if v, ok := fields["timeout"]; ok && !isNull(v) {
		var secs float64
		if json.Unmarshal(v, &secs) != nil { // JSON has no NaN or infinity: the range check below is enough
			return nil, badArgs("timeout: must be a number of seconds")
		}
		maxSecs := maxTimeout.Seconds()
		if secs <= 0 || secs > maxSecs {
			return nil, badArgs("timeout: must be greater than 0 and at most %s seconds", trimFloat(maxSecs))
		}
		r.timeout = time.Duration(secs * float64(time.Second))
	}
	return r, nil
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

func trimFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", f), "0"), ".")
}

// quoteArgv renders argv as a POSIX shell command line, so that the command text a result carries
// (and that tokenjuice classifies) reads like what a person would type.
func quoteArgv(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
