package main

import (
	"bytes"
	"strings"
	"testing"
)

// nilMapWrite panics the way a nil-pointer bug does, from a named function the message can name.
func nilMapWrite() int {
	var m map[string]int
	m["x"] = 1
	return 0
}

func TestRunTurnsPanicIntoOneLine(t *testing.T) {
	tests := []struct {
		name     string
		execute  func() int
		code     int
		stderrRE []string // substrings the one line must hold; none means no output
	}{
		{"ok", func() int { return 0 }, 0, nil},
		{"usage", func() int { return 2 }, 2, nil},
		{"runtime panic", nilMapWrite, 1, []string{"nodmix: internal error: assignment to entry in nil map", "nilMapWrite main_test.go:", "please report it"}},
		{"multi-line value", func() int { panic("first\nsecond") }, 1, []string{"internal error: first second"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(&stderr, tt.execute); code != tt.code {
				t.Errorf("code = %d, want %d", code, tt.code)
			}
			out := stderr.String()
			if tt.stderrRE == nil {
				if out != "" {
					t.Errorf("stderr = %q, want nothing", out)
				}
				return
			}
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
				t.Errorf("stderr is not one line: %q", out)
			}
			for _, s := range tt.stderrRE {
				if !strings.Contains(out, s) {
					t.Errorf("stderr = %q, want it to contain %q", out, s)
				}
			}
		})
	}
}
