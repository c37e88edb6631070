//go:build unix

package exec

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWithheldEnvironment: bash and exec print their environment; nodmix's secrets are not in
// it unless tools.exec.env passes one on purpose, and everything else of the user's is.
func TestWithheldEnvironment(t *testing.T) {
	base := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=/home/someone",
		"LANG=C.UTF-8",
		"KEEP_ME=kept-value",
		"TAVILY_API_KEY=tvly-leaked",
		"OPENAI_API_KEY=sk-leaked",
		"GH_MCP_TOKEN=ghp-leaked",
		"ANTHROPIC_API_KEY=sk-ant-passed",
	}
	ex, sh := tools(t, Options{
		Environ:  func() []string { return base },
		Withhold: []string{"ANTHROPIC_API_KEY", "GH_MCP_TOKEN", "OPENAI_API_KEY", "TAVILY_API_KEY"},
		Env: func() ([]string, error) {
			return []string{"ANTHROPIC_API_KEY=sk-ant-passed", "CONFIGURED=yes"}, nil
		},
	})
	want := []string{
		"ANTHROPIC_API_KEY=sk-ant-passed", "CONFIGURED=yes", "FROM_CALL=call",
		"HOME=/home/someone", "KEEP_ME=kept-value", "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH"),
	}
	for _, tc := range []struct {
		name string
		res  func() string
	}{
		{"bash", func() string {
			res, _ := call(t, context.Background(), sh, map[string]any{"command": "env", "env": map[string]string{"FROM_CALL": "call"}})
			return res.Content[0].Text
		}},
		{"exec", func() string {
			res, _ := call(t, context.Background(), ex, map[string]any{"command": []string{"env"}, "env": map[string]string{"FROM_CALL": "call"}})
			return res.Content[0].Text
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.res()
			for _, leaked := range []string{"tvly-leaked", "sk-leaked", "ghp-leaked"} {
				if strings.Contains(out, leaked) {
					t.Errorf("the command saw %s:\n%s", leaked, out)
				}
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				// The shell adds a few of its own (PWD, SHLVL, _).
				name, _, _ := strings.Cut(line, "=")
				if slices.Contains([]string{"PWD", "SHLVL", "_", "OLDPWD"}, name) {
					continue
				}
				got = append(got, line)
			}
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEnvError: a tools.exec.env value that cannot be resolved stops the command with the
// setting's path, and nothing runs.
func TestEnvError(t *testing.T) {
	_, sh := tools(t, Options{Env: func() ([]string, error) {
		return nil, errors.New("tools.exec.env.GH_TOKEN: environment variable GITHUB_TOKEN is not set")
	}})
	marker := t.TempDir() + "/ran"
	res, rep := call(t, context.Background(), sh, map[string]any{"command": "touch " + marker})
	if !res.IsError || res.Content[0].Text != "Command did not start: tools.exec.env.GH_TOKEN: environment variable GITHUB_TOKEN is not set" {
		t.Errorf("result = %+v", res.Content)
	}
	if rep.ExitCode != -1 {
		t.Errorf("exit code = %d, want -1", rep.ExitCode)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}

// TestCallPathFindsTheProgram: exec looks its program up on the PATH the command will have (the
// call's env), not on nodmix's own.
func TestCallPathFindsTheProgram(t *testing.T) {
	ex, _ := tools(t, Options{})
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/nodmix-test-tool", []byte("#!/bin/sh\necho found on the call PATH\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"the call's PATH", map[string]string{"PATH": dir + ":" + os.Getenv("PATH")}, "found on the call PATH\n"},
		{"nodmix's PATH", nil, `Command did not start: command not found: "nodmix-test-tool" is not in PATH`},
		{"a relative directory is not searched", map[string]string{"PATH": "."}, `Command did not start: command not found: "nodmix-test-tool" is not in PATH`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"command": []string{"nodmix-test-tool"}, "cwd": dir}
			if tc.env != nil {
				args["env"] = tc.env
			}
			res, _ := call(t, context.Background(), ex, args)
			if got := res.Content[0].Text; !strings.HasPrefix(got, tc.want) {
				t.Errorf("output %q, want it to start with %q", got, tc.want)
			}
		})
	}
}
