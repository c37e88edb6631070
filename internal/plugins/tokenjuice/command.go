package tokenjuice

import (
	"path"
	"strings"
)

// simple is one simple command of a pipeline, after the words that do not change what runs
// (VAR=value, env, sudo, time, npx, python -m, ...) were stripped.
type simple struct {
	argv    []string // effective argv; argv[0] is a base name ("git", not "/usr/bin/git")
	stdinIn bool     // input redirected from a file ("< file")
}

func (s *simple) name() string {
	if len(s.argv) == 0 {
		return ""
	}
	return s.argv[0]
}

// args returns the arguments after the program name.
func (s *simple) args() []string {
	if len(s.argv) < 2 {
		return nil
	}
	return s.argv[1:]
}

// arg returns argv[i] or "".
func (s *simple) arg(i int) string {
	if i < len(s.argv) {
		return s.argv[i]
	}
	return ""
}

// has reports whether any argument equals one of flags.
func (s *simple) has(flags ...string) bool {
	for _, a := range s.args() {
		for _, f := range flags {
			if a == f {
				return true
			}
		}
	}
	return false
}

// hasPrefix reports whether any argument starts with one of prefixes.
func (s *simple) hasPrefix(prefixes ...string) bool {
	for _, a := range s.args() {
		for _, p := range prefixes {
			if strings.HasPrefix(a, p) {
				return true
			}
		}
	}
	return false
}

// hasShort reports whether a short-option cluster (like -la) contains the letter c.
func (s *simple) hasShort(c byte) bool {
	for _, a := range s.args() {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], c) >= 0 {
			return true
		}
	}
	return false
}

// operands returns the arguments that are not options.
func (s *simple) operands() []string {
	var out []string
	for _, a := range s.args() {
		if a == "" || a[0] != '-' {
			out = append(out, a)
		}
	}
	return out
}

// command is a parsed command line: segments joined by ; && || & or newlines, each a pipeline.
type command struct {
	segments [][]simple
	main     []simple // the pipeline whose output the result mostly is
}

// source is the first stage of the main pipeline: what produced the lines the filters let through.
func (c *command) source() *simple {
	if len(c.main) == 0 {
		return &simple{}
	}
	return &c.main[0]
}

// filters are the stages after the source.
func (c *command) filters() []simple {
	if len(c.main) < 2 {
		return nil
	}
	return c.main[1:]
}

// parseCommand parses a bash command line (or an argv from exec). It understands quoting, escapes,
// $(...) and backticks, pipelines, lists, redirections and comments well enough to find the
// commands; it never fails.
func parseCommand(line string, argv []string) *command {
	c := &command{}
	if len(argv) > 0 && strings.TrimSpace(line) == "" {
		line = strings.Join(argv, " ")
	}
	switch {
	case len(argv) > 0 && looksShell(argv):
		c.segments = splitShell(argv[len(argv)-1], 1)
	case len(argv) > 0:
		c.segments = [][]simple{{effective(append([]string(nil), argv...))}}
	default:
		c.segments = splitShell(line, 0)
	}
	c.pickMain()
	return c
}

// looksShell reports whether an exec argv is a shell running a script, whose body is what counts.
func looksShell(argv []string) bool {
	if len(argv) < 3 {
		return false
	}
	switch path.Base(argv[0]) {
	case "bash", "sh", "zsh", "dash", "ksh":
		return argv[len(argv)-2] == "-c" || argv[len(argv)-2] == "-lc" || argv[len(argv)-2] == "-ec"
	}
	return false
}

// trivial commands set up or report and do not shape a result.
var trivial = map[string]bool{
	"cd": true, "pushd": true, "popd": true, "export": true, "set": true, "source": true, ".": true,
	"true": true, ":": true, "echo": true, "printf": true, "sleep": true, "wait": true, "clear": true,
	"unset": true, "alias": true, "trap": true, "ulimit": true, "umask": true, "shopt": true,
	"mkdir": true, "touch": true, "": true,
}

// pickMain takes the last substantive segment as the main pipeline, or the last segment when all
// are trivial.
func (c *command) pickMain() {
	for _, seg := range c.segments {
		if len(seg) > 0 && !trivial[seg[0].name()] {
			c.main = seg
		}
	}
	if c.main == nil && len(c.segments) > 0 {
		c.main = c.segments[len(c.segments)-1]
	}
}

// splitShell splits a script into segments of pipelines of simple commands.
func splitShell(script string, depth int) [][]simple {
	var (
		segs  [][]simple
		pipe  []simple
		words []string
		word  strings.Builder
		inW   bool
		redir bool // the next word is a redirection target
		stdin bool
	)
	endWord := func() {
		if !inW {
			return
		}
		w := word.String()
		word.Reset()
		inW = false
		if redir {
			redir = false
			return
		}
		words = append(words, w)
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			s := effective(words)
			s.stdinIn = stdin
			// A shell running a script: the script's commands are what counts.
			if depth < 3 && len(s.argv) >= 3 && (s.argv[0] == "bash" || s.argv[0] == "sh" || s.argv[0] == "zsh") &&
				(s.argv[len(s.argv)-2] == "-c" || s.argv[len(s.argv)-2] == "-lc") {
				inner := splitShell(s.argv[len(s.argv)-1], depth+1)
				if len(inner) > 0 {
					segs = append(segs, inner[:len(inner)-1]...)
					pipe = append(pipe, inner[len(inner)-1]...)
					words, stdin = nil, false
					return
				}
			}
			pipe = append(pipe, s)
		}
		words, stdin = nil, false
	}
	endSeg := func() {
		endCmd()
		if len(pipe) > 0 {
			segs = append(segs, pipe)
		}
		pipe = nil
	}
	r := []rune(script)
	for i := 0; i < len(r); i++ {
		ch := r[i]
		switch {
		case ch == '\\' && i+1 < len(r):
			if r[i+1] != '\n' {
				word.WriteRune(r[i+1])
				inW = true
			}
			i++
		case ch == '\'':
			j := i + 1
			for j < len(r) && r[j] != '\'' {
				j++
			}
			word.WriteString(string(r[i+1 : min(j, len(r))]))
			inW = true
			i = j
		case ch == '"':
			j := i + 1
			for j < len(r) && r[j] != '"' {
				if r[j] == '\\' && j+1 < len(r) {
					j++
				}
				j++
			}
			word.WriteString(strings.ReplaceAll(string(r[i+1:min(j, len(r))]), `\"`, `"`))
			inW = true
			i = j
		case ch == '$' && i+1 < len(r) && r[i+1] == '(' || ch == '`':
			// Command substitution: opaque, kept inside the word.
			j := skipSubst(r, i)
			word.WriteString(string(r[i:j]))
			inW = true
			i = j - 1
		case ch == '#' && !inW:
			for i < len(r) && r[i] != '\n' {
				i++
			}
			i--
		case ch == ' ' || ch == '\t':
			endWord()
		case ch == '\n' || ch == ';':
			endSeg()
		case ch == '&':
			if i+1 < len(r) && r[i+1] == '&' {
				i++
				endSeg()
			} else if i+1 < len(r) && r[i+1] == '>' {
				// &> file
				endWord()
				i++
				if i+1 < len(r) && r[i+1] == '>' {
					i++
				}
				redir = true
			} else {
				endSeg()
			}
		case ch == '|':
			if i+1 < len(r) && r[i+1] == '|' {
				i++
				endSeg()
			} else {
				if i+1 < len(r) && r[i+1] == '&' {
					i++
				}
				endCmd()
			}
		case ch == '>' || ch == '<':
			// A redirection, possibly with a leading fd number in the current word (2>).
			if inW {
				if w := word.String(); isDigits(w) {
					word.Reset()
					inW = false
				} else {
					endWord()
				}
			}
			if ch == '<' && !(i+1 < len(r) && (r[i+1] == '<' || r[i+1] == '(')) {
				stdin = true
			}
			for i+1 < len(r) && (r[i+1] == '>' || r[i+1] == '<' || r[i+1] == '|') {
				i++
			}
			if i+1 < len(r) && r[i+1] == '&' { // 2>&1
				i++
				for i+1 < len(r) && (r[i+1] >= '0' && r[i+1] <= '9' || r[i+1] == '-') {
					i++
				}
				continue
			}
			redir = true
		case ch == '(' || ch == ')' || ch == '{' && !inW || ch == '}' && !inW:
			endSeg()
		default:
			word.WriteRune(ch)
			inW = true
		}
	}
	endSeg()
	return segs
}

func skipSubst(r []rune, i int) int {
	if r[i] == '`' {
		j := i + 1
		for j < len(r) && r[j] != '`' {
			j++
		}
		return min(j+1, len(r))
	}
	depth := 0
	for j := i + 1; j < len(r); j++ {
		switch r[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(r)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for j, c := range w[:i] {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// effective strips what does not change which program shapes the output: assignments, wrappers
// (env, sudo, time, nice, timeout, stdbuf, nohup, command), package runners (npx, pnpm exec, uv run,
// poetry run, bundle exec) and "python -m module", which becomes the module, so that
// "python -m pytest" is classified as pytest.
func effective(words []string) simple {
	argv := words
	for guard := 0; len(argv) > 0 && guard < 8; guard++ {
		for len(argv) > 0 && isAssignment(argv[0]) {
			argv = argv[1:]
		}
		if len(argv) == 0 {
			break
		}
		name := path.Base(argv[0])
		switch name {
		case "env":
			argv = skipOpts(argv[1:], map[string]bool{"-u": true, "--unset": true, "-C": true, "--chdir": true, "-S": true})
			continue
		case "sudo", "doas":
			argv = skipOpts(argv[1:], map[string]bool{"-u": true, "-g": true, "-h": true, "-p": true, "-C": true})
			continue
		case "time", "nohup", "command", "exec", "builtin", "caffeinate", "unbuffer":
			argv = skipOpts(argv[1:], nil)
			continue
		case "nice", "ionice", "stdbuf", "chrt", "taskset":
			argv = skipOpts(argv[1:], map[string]bool{"-n": true, "-c": true, "-p": true})
			continue
		case "timeout":
			argv = skipOpts(argv[1:], map[string]bool{"-s": true, "--signal": true, "-k": true, "--kill-after": true})
			if len(argv) > 0 {
				argv = argv[1:] // the duration
			}
			continue
		case "npx", "bunx", "pnpx":
			argv = skipOpts(argv[1:], map[string]bool{"-p": true, "--package": true})
			continue
		case "npm", "pnpm", "yarn", "bun":
			if len(argv) > 2 && (argv[1] == "exec" || argv[1] == "dlx" || argv[1] == "x") {
				argv = skipOpts(argv[2:], nil)
				if len(argv) > 0 && argv[0] == "--" {
					argv = argv[1:]
				}
				continue
			}
		case "uv", "poetry", "pipenv", "pdm", "hatch", "rye":
			if len(argv) > 2 && argv[1] == "run" {
				argv = skipOpts(argv[2:], map[string]bool{"--with": true, "--python": true, "-p": true})
				continue
			}
		case "bundle":
			if len(argv) > 2 && argv[1] == "exec" {
				argv = argv[2:]
				continue
			}
		}
		if isPython(name) {
			for i := 1; i < len(argv); i++ {
				if argv[i] == "-m" && i+1 < len(argv) {
					argv = argv[i+1:]
					break
				}
				if (argv[i] == "-X" || argv[i] == "-W") && i+1 < len(argv) {
					i++
					continue
				}
				if !strings.HasPrefix(argv[i], "-") {
					break
				}
			}
		}
		break
	}
	out := append([]string(nil), argv...)
	if len(out) > 0 {
		out[0] = path.Base(out[0])
	}
	return simple{argv: out}
}

func isPython(name string) bool {
	return name == "python" || name == "py" || strings.HasPrefix(name, "python3") || name == "python2"
}

// skipOpts drops leading options (and the values of those in withValue) and a "--".
func skipOpts(argv []string, withValue map[string]bool) []string {
	for len(argv) > 0 {
		a := argv[0]
		switch {
		case a == "--":
			return argv[1:]
		case withValue[a]:
			if len(argv) < 2 {
				return nil
			}
			argv = argv[2:]
		case strings.HasPrefix(a, "-") && len(a) > 1:
			argv = argv[1:]
		case isAssignment(a):
			argv = argv[1:]
		default:
			return argv
		}
	}
	return argv
}

// gitSub returns the git subcommand and its index in argv, skipping git's global options.
func gitSub(s *simple) (string, int) {
	if s.name() != "git" {
		return "", -1
	}
	for i := 1; i < len(s.argv); i++ {
		a := s.argv[i]
		switch {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a, i
		}
	}
	return "", -1
}

// readCommands print a file's content: their output stays byte-identical.
var readCommands = map[string]bool{
	"cat": true, "tac": true, "head": true, "tail": true, "nl": true, "bat": true, "batcat": true,
	"less": true, "more": true, "sed": true, "jq": true, "yq": true,
}

// passFilters do not reshape what flows through them, only cut it.
var passFilters = map[string]bool{"head": true, "tail": true, "nl": true, "cat": true, "less": true, "more": true}

// isFileRead reports whether the command's output is the exact content of files: cat, sed -n,
// head, tail, nl, bat, jq or yq of a file, git show REV:PATH, git cat-file -p, optionally piped
// through head/tail/nl. Every substantive segment must be one.
func (c *command) isFileRead() bool {
	found := false
	for _, seg := range c.segments {
		if len(seg) == 0 || trivial[seg[0].name()] || len(seg) == 1 && seg[0].name() == "sed" && seg[0].hasShort('i') {
			continue // no output of its own
		}
		if !pipelineReads(seg) {
			return false
		}
		found = true
	}
	return found
}

func pipelineReads(seg []simple) bool {
	src := &seg[0]
	for _, f := range seg[1:] {
		if !passFilters[f.name()] {
			return false
		}
	}
	name := src.name()
	switch {
	case name == "git":
		sub, i := gitSub(src)
		switch sub {
		case "show":
			for _, a := range src.argv[i+1:] {
				if !strings.HasPrefix(a, "-") && strings.Contains(a, ":") {
					return true
				}
			}
		case "cat-file":
			return src.has("-p") || src.has("blob")
		}
		return false
	case name == "sed":
		// sed -i edits files and prints nothing; any other sed of a file prints its content.
		return !src.hasShort('i') && !src.hasPrefix("--in-place") && (len(src.operands()) >= 2 || src.stdinIn)
	case name == "jq" || name == "yq":
		return len(src.operands()) >= 2 || src.stdinIn
	case readCommands[name]:
		return true
	}
	return false
}
