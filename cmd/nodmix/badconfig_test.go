package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Every command of the CLI is run against every bad configuration. The commands are read from
// the binary's own help, so a command added later is covered without touching this file; one
// that needs particular arguments, or reads no config at all, is named in the tables below.

// badConfigs are broken config files, each with what the error must name: the file position of
// a syntax error, else the dotted path of the offending value.
var badConfigs = []struct {
	name, file, names string
}{
	{"syntax error", "{ tools: { discoveryMode: \"all\" }\n", "nodmix.json5:2:"},
	{"unknown key", `{ tools: { discoveryMod: "all" } }`, "tools.discoveryMod"},
	{"wrong type", `{ tools: { exec: { timeoutSeconds: "soon" } } }`, "tools.exec.timeoutSeconds"},
	{"bad plugin value", `{ plugins: { entries: { tavily: { enabled: true, config: { webSearch: { searchTimeoutSeconds: -1 } } } } } }`,
		"webSearch.searchTimeoutSeconds"},
}

// collidingCatalog is a catalog file with two tools of one name: commands that take --catalog
// are also run on it with a valid config.
const collidingCatalog = `{"id":"mcp:a:lookup","name":"mcp__x__lookup","server":"a","mcp_tool_name":"lookup"}
{"id":"mcp:b:lookup","name":"mcp__x__lookup","server":"b","mcp_tool_name":"lookup"}
`

// commandArgs are the arguments a command needs to get as far as reading the config; a command
// not listed gets one "x" for each positional placeholder of its usage line (`get PATH`).
var commandArgs = map[string][]string{
	"config get":         {"tools"},
	"config set":         {"tools.exec.timeoutSeconds", "30"},
	"config unset":       {"tools.exec"},
	"plugins enable":     {"tavily"},
	"plugins disable":    {"tavily"},
	"configure":          {"--section", "web", "--provider", "tavily", "--api-key-env", "TAVILY_API_KEY", "--non-interactive"},
	"tools search":       {"weather"},
	"tools describe":     {"exec"},
	"tools call":         {"exec", "--args", `{"command":["true"]}`},
	"tools code":         {"-e", "return 1"},
	"tokenjuice compact": {"--command", "ls"},
	"search eval":        {"--tools", "tools.jsonl", "--queries", "queries.jsonl"},
	"gateway":            {"--listen", "127.0.0.1:0"},
}

// noConfig are the commands that never read the config: they must succeed whatever it holds.
var noConfig = []string{"version", "config file", "help", "completion *", "search eval", "tokenjuice compact"}

// editing are the commands that edit the file: a file that parses but does not validate is only
// a warning (naming the path) for them, so that it can be repaired; what they then do may
// succeed or fail on its own merits. A syntax error stops them like every other command.
var editing = []string{"config get", "config set", "config unset", "plugins list", "plugins enable", "plugins disable", "configure"}

func matchesAny(cmd string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := filepath.Match(p, cmd); ok {
			return true
		}
	}
	return false
}

type leaf struct {
	path    string // "tools call"
	usage   string // the usage line after "nodmix "
	catalog bool   // takes --catalog
}

var (
	availableRE = regexp.MustCompile(`(?s)Available Commands:\n(.*?)\n\n`)
	usageRE     = regexp.MustCompile(`(?m)^Usage:\n  nodmix (.*)$`)
)

// leaves walks the command tree through `--help` and returns every runnable leaf command.
func leaves(t *testing.T) []leaf {
	t.Helper()
	var out []leaf
	var walk func(path []string)
	walk = func(path []string) {
		help := helpOf(t, path)
		if m := availableRE.FindStringSubmatch(help); m != nil {
			for _, line := range strings.Split(m[1], "\n") {
				if f := strings.Fields(line); len(f) > 0 {
					walk(append(slices.Clone(path), f[0]))
				}
			}
			return
		}
		l := leaf{path: strings.Join(path, " "), catalog: strings.Contains(help, "--catalog ")}
		if m := usageRE.FindStringSubmatch(help); m != nil {
			l.usage = m[1]
		}
		out = append(out, l)
	}
	walk(nil)
	return out
}

func helpOf(t *testing.T, path []string) string {
	t.Helper()
	out, err := exec.Command(binary, append(slices.Clone(path), "--help")...).Output()
	if err != nil {
		t.Fatalf("nodmix %s --help: %v", strings.Join(path, " "), err)
	}
	return string(out)
}

// placeholderArgs fills the required parts of a usage line ("agent -m MESSAGE [--session KEY]",
// "tools describe ID [flags]"): a placeholder becomes "x", a required flag is given with its value
// (a placeholder again, or the word written there); optional and alternative groups are left out.
func placeholderArgs(l leaf) []string {
	words := strings.Fields(strings.TrimPrefix(l.usage, l.path))
	isPlaceholder := func(w string) bool {
		return w == strings.ToUpper(w) && strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == ""
	}
	var args []string
	depth := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case depth > 0 || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "("):
			depth += strings.Count(w, "[") + strings.Count(w, "(") - strings.Count(w, "]") - strings.Count(w, ")")
		case strings.HasPrefix(w, "-"):
			args = append(args, w)
			if i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") && !strings.HasPrefix(words[i+1], "[") {
				i++
				if v := words[i]; isPlaceholder(v) {
					args = append(args, "x")
				} else {
					args = append(args, v)
				}
			}
		case isPlaceholder(w):
			args = append(args, "x")
		}
	}
	return args
}

func TestBadConfigEveryCommand(t *testing.T) {
	ls := leaves(t)
	// The walk must see the commands that were there when this test was written.
	for _, want := range []string{"tools list", "tools call", "mcp serve", "mcp servers", "gateway", "config set", "tokenjuice raw"} {
		if !slices.ContainsFunc(ls, func(l leaf) bool { return l.path == want }) {
			t.Fatalf("command %q not found in the help tree; found %d leaves", want, len(ls))
		}
	}
	for _, l := range ls {
		args, ok := commandArgs[l.path]
		if !ok {
			args = placeholderArgs(l)
		}
		argv := append(strings.Fields(l.path), args...)
		cases := badConfigs
		if l.catalog {
			cases = append(slices.Clone(cases), struct{ name, file, names string }{"colliding names", "{}", `"mcp__x__lookup"`})
		}
		for _, bc := range cases {
			t.Run(l.path+"/"+bc.name, func(t *testing.T) {
				t.Parallel()
				argv := argv
				if bc.name == "colliding names" {
					argv = append(slices.Clone(argv), "--catalog", "dup.jsonl")
				}
				code, stderr := runWithConfig(t, bc.file, argv)
				if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
					t.Fatalf("nodmix %s panicked:\n%s", strings.Join(argv, " "), stderr)
				}
				switch {
				case matchesAny(l.path, noConfig):
					if code != 0 {
						t.Errorf("nodmix %s: exit %d, want 0 (it reads no config)\n%s", strings.Join(argv, " "), code, stderr)
					}
					return
				case code == 2:
					t.Fatalf("nodmix %s: usage error; give the command its arguments in commandArgs\n%s", strings.Join(argv, " "), stderr)
				case matchesAny(l.path, editing) && bc.name != "syntax error":
					if code != 0 && code != 1 {
						t.Errorf("nodmix %s: exit %d, want 0 or 1", strings.Join(argv, " "), code)
					}
				case code != 1:
					t.Errorf("nodmix %s: exit %d, want 1\n%s", strings.Join(argv, " "), code, stderr)
				}
				if !strings.Contains(stderr, bc.names) {
					t.Errorf("nodmix %s: stderr does not name %s:\n%s", strings.Join(argv, " "), bc.names, stderr)
				}
			})
		}
	}
}

// runWithConfig runs the binary in a fresh home whose config file holds file, with stdin empty,
// and returns its exit code and stderr.
func runWithConfig(t *testing.T, file string, argv []string) (int, string) {
	t.Helper()
	work := t.TempDir()
	home := filepath.Join(work, ".nodmix")
	for name, body := range map[string]string{
		filepath.Join(home, "nodmix.json5"):  file,
		filepath.Join(work, "dup.jsonl"):     collidingCatalog,
		filepath.Join(work, "tools.jsonl"):   `{"id":"mcp:a:lookup","name":"lookup","description":"look a word up"}` + "\n",
		filepath.Join(work, "queries.jsonl"): `{"qid":"q1","query":"look up a word","gold":["mcp:a:lookup"]}` + "\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, argv...)
	cmd.Dir = work
	cmd.Env = []string{"HOME=" + work, "NODMIX_HOME=" + home, "PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("nodmix %s did not end within a minute:\n%s", strings.Join(argv, " "), stderr.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatalf("nodmix %s: %v", strings.Join(argv, " "), err)
	return 0, ""
}
