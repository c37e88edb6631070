//go:build unix

package exec

import (
	"context"
	osexec "os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPipeHeldWhateverTheExit: a background process that keeps the output open past the wait is
// reported whatever the command's own exit, so that the model knows later output was not captured.
func TestPipeHeldWhateverTheExit(t *testing.T) {
	_, sh := tools(t, Options{WaitDelay: 100 * time.Millisecond})
	for _, tc := range []struct {
		script   string
		timeout  float64
		exit     int
		timedOut bool
	}{
		{script: "sleep 60 & echo $!", timeout: 30, exit: 0},
		{script: "sleep 60 & echo $!; exit 3", timeout: 30, exit: 3},
		// A process in a session of its own is out of the group kill's reach.
		{script: "setsid sleep 60 & echo $!; sleep 60", timeout: 0.5, exit: -1, timedOut: true},
	} {
		t.Run(tc.script, func(t *testing.T) {
			if strings.HasPrefix(tc.script, "setsid ") {
				if _, err := osexec.LookPath("setsid"); err != nil {
					t.Skip("no setsid")
				}
			}
			res, rep := call(t, context.Background(), sh, map[string]any{"command": tc.script, "timeout": tc.timeout})
			pid, err := strconv.Atoi(strings.TrimSpace(rep.Output))
			if err != nil {
				t.Fatalf("output %q", rep.Output)
			}
			defer func() { _ = syscall.Kill(pid, syscall.SIGKILL) }()
			if !rep.PipeHeld || rep.ExitCode != tc.exit || rep.TimedOut != tc.timedOut || res.IsError != tc.timedOut {
				t.Errorf("pipe_held=%v exit=%d timed_out=%v isError=%v", rep.PipeHeld, rep.ExitCode, rep.TimedOut, res.IsError)
			}
			if !strings.Contains(res.Content[1].Text, "a background process kept the output open") {
				t.Errorf("status line = %q", res.Content[1].Text)
			}
		})
	}
}
