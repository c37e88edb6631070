package main_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The CLI is tested through the built binary with small scripts in testdata/script/*.txtar, in the
// spirit of testscript: each archive holds a script and the files it uses.
//
//	env NAME=VALUE          set a variable for the following commands ($WORK is the work dir)
//	[!] nodmix ARGS...      run the binary; ! expects a non-zero exit
//	status N                the last command exited with N
//	[!] stdout|stderr RE    the last command's output matches (or not) the regexp
//	cmp stdout|stderr|FILE FILE   exact comparison (files relative to $WORK)
//	stdin FILE              feed FILE to the next command
//	cp SRC DST, rm FILE
//
// Arguments are split on spaces; single quotes group words. Lines starting with # are comments.

var update = flag.Bool("update", false, "rewrite the golden files that scripts compare with")

var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "nodmix-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "nodmix")
	build := exec.Command("go", "build", "-race", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runScript(t, file)
		})
	}
}

// txtar is a minimal reader of the txtar format: a comment (the script), then files, each
// introduced by a line "-- name --".
func txtar(data []byte) (script string, files map[string][]byte) {
	files = map[string][]byte{}
	lines := strings.SplitAfter(string(data), "\n")
	var cur string
	var buf strings.Builder
	inFile := false
	flush := func() {
		if inFile {
			files[cur] = []byte(buf.String())
		} else {
			script = buf.String()
		}
		buf.Reset()
	}
	for _, l := range lines {
		trim := strings.TrimRight(l, "\r\n")
		if strings.HasPrefix(trim, "-- ") && strings.HasSuffix(trim, " --") && len(trim) > 6 {
			flush()
			cur = strings.TrimSpace(trim[3 : len(trim)-3])
			inFile = true
			continue
		}
		buf.WriteString(l)
	}
	flush()
	return script, files
}

type scriptState struct {
	t              *testing.T
	work           string
	env            []string
	stdout, stderr string
	status         int
	stdin          []byte
	archive        string
}

func runScript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	script, files := txtar(data)
	work := t.TempDir()
	for name, body := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo, _ := filepath.Abs("../..")
	s := &scriptState{t: t, work: work, archive: file, env: []string{
		"HOME=" + filepath.Join(work, "home"),
		"NODMIX_HOME=" + filepath.Join(work, ".nodmix"),
		"PATH=" + os.Getenv("PATH"),
		"WORK=" + work,
		"REPO=" + repo,
	}}
	for i, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := s.do(line); err != nil {
			t.Fatalf("%s:%d: %s\n%v\nstdout:\n%s\nstderr:\n%s", file, i+1, line, err, s.stdout, s.stderr)
		}
	}
}

func (s *scriptState) expand(w string) string {
	return os.Expand(w, func(k string) string {
		for i := len(s.env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(s.env[i], k+"="); ok {
				return v
			}
		}
		return ""
	})
}

func splitArgs(line string) []string {
	var args []string
	var cur strings.Builder
	inQuote, have := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			inQuote = !inQuote
			have = true
		case r == ' ' && !inQuote:
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		args = append(args, cur.String())
	}
	return args
}

func (s *scriptState) do(line string) error {
	neg := false
	if rest, ok := strings.CutPrefix(line, "! "); ok {
		neg, line = true, rest
	}
	raw := splitArgs(line)
	args := make([]string, len(raw))
	for i, a := range raw {
		args[i] = s.expand(a)
	}
	switch args[0] {
	case "env":
		s.env = append(s.env, args[1:]...)
	case "stdin":
		b, err := os.ReadFile(filepath.Join(s.work, args[1]))
		if err != nil {
			return err
		}
		s.stdin = b
	case "nodmix":
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary, args[1:]...)
		cmd.Dir = s.work
		cmd.Env = s.env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Stdin = bytes.NewReader(s.stdin)
		s.stdin = nil
		err := cmd.Run()
		s.stdout, s.stderr, s.status = out.String(), errb.String(), 0
		if ee, ok := err.(*exec.ExitError); ok {
			s.status = ee.ExitCode()
		} else if err != nil {
			return err
		}
		if neg != (s.status != 0) {
			return fmt.Errorf("exit status %d", s.status)
		}
	case "status":
		want, _ := strconv.Atoi(args[1])
		if s.status != want {
			return fmt.Errorf("exit status %d, want %d", s.status, want)
		}
	case "stdout", "stderr":
		text := s.stdout
		if args[0] == "stderr" {
			text = s.stderr
		}
		re, err := regexp.Compile("(?m)" + strings.Join(args[1:], " "))
		if err != nil {
			return err
		}
		if re.MatchString(text) == neg {
			return fmt.Errorf("%s match of %q: %v, want %v", args[0], re, !neg, neg)
		}
	case "cmp":
		got := s.content(args[1])
		wantPath := filepath.Join(s.work, args[2])
		want, err := os.ReadFile(wantPath)
		if err != nil {
			return err
		}
		if got != string(want) {
			if *update && (args[1] == "stdout" || args[1] == "stderr") {
				return updateArchive(s.archive, args[2], got)
			}
			return fmt.Errorf("%s differs from %s:\n--- got ---\n%s\n--- want ---\n%s", args[1], args[2], got, want)
		}
	case "cp":
		if err := os.WriteFile(filepath.Join(s.work, args[2]), []byte(s.content(args[1])), 0o644); err != nil {
			return err
		}
	case "rm":
		return os.Remove(filepath.Join(s.work, args[1]))
	case "exists":
		_, err := os.Stat(filepath.Join(s.work, args[1]))
		if (err == nil) == neg {
			return fmt.Errorf("exists %s: %v", args[1], err)
		}
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
	return nil
}

func (s *scriptState) content(name string) string {
	switch name {
	case "stdout":
		return s.stdout
	case "stderr":
		return s.stderr
	}
	b, _ := os.ReadFile(filepath.Join(s.work, name))
	return string(b)
}

// updateArchive replaces the body of one file in a txtar archive (for -update).
func updateArchive(archive, name, body string) error {
	data, err := os.ReadFile(archive)
	if err != nil {
		return err
	}
	marker := "-- " + name + " --\n"
	i := strings.Index(string(data), marker)
	if i < 0 {
		return fmt.Errorf("%s has no file %s", archive, name)
	}
	start := i + len(marker)
	end := len(data)
	if j := regexp.MustCompile(`(?m)^-- .+ --$`).FindIndex(data[start:]); j != nil {
		end = start + j[0]
	}
	out := string(data[:start]) + body + string(data[end:])
	return os.WriteFile(archive, []byte(out), 0o644)
}
