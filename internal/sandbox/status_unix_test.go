//go:build unix

package sandbox

import (
	"os"
	"os/exec"
	"testing"
)

func TestExitDescription(t *testing.T) {
	tests := []struct {
		name string
		args []string
		kill bool
		want string
	}{
		{"exit code", []string{ChildArg, "silent"}, false, "0"},
		{"unknown mode exits 2", []string{ChildArg, "no-such-mode"}, false, "2"},
		{"signal", []string{ChildArg, "garbage"}, true, "SIGKILL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tc.args...)
			cmd.Env = []string{}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.kill {
				_ = cmd.Process.Kill()
			}
			_ = cmd.Wait()
			if got := exitDescription(cmd.ProcessState); got != tc.want {
				t.Errorf("exitDescription = %q, want %q", got, tc.want)
			}
		})
	}
}
