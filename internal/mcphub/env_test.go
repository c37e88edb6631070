package mcphub

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/leaktest"
)

func TestServerEnv(t *testing.T) {
	environ := []string{
		"HOME=/home/u", "PATH=/usr/bin", "USER=u", "LOGNAME=u", "SHELL=/bin/sh", "TERM=xterm",
		"LANG=C.UTF-8", "LC_ALL=de_DE.UTF-8", "LC_TIME=C",
		"TAVILY_API_KEY=tvly-secret", "OPENAI_API_KEY=sk-secret", "NODMIX_GATEWAY_TOKEN=tok",
		"BASH_FUNC_x%%=() { echo hi; }", "TERM_PROGRAM=x", "NOEQUALS", "=odd",
	}
	tests := []struct {
		name string
		cfg  ServerConfig
		goos string
		want []string
	}{
		{"default set", ServerConfig{}, "linux", []string{
			"HOME=/home/u", "PATH=/usr/bin", "USER=u", "LOGNAME=u", "SHELL=/bin/sh", "TERM=xterm",
			"LANG=C.UTF-8", "LC_ALL=de_DE.UTF-8", "LC_TIME=C",
		}},
		{"own env wins and comes last", ServerConfig{Env: map[string]string{"PATH": "/opt/bin", "B": "2", "A": "1"}}, "linux", []string{
			"HOME=/home/u", "USER=u", "LOGNAME=u", "SHELL=/bin/sh", "TERM=xterm",
			"LANG=C.UTF-8", "LC_ALL=de_DE.UTF-8", "LC_TIME=C", "A=1", "B=2", "PATH=/opt/bin",
		}},
		{"inheritEnv", ServerConfig{InheritEnv: true, Env: map[string]string{"A": "1"}}, "linux", append(append([]string{}, environ[:14]...), "A=1")},
		{"windows names fold case", ServerConfig{}, "windows", []string{"PATH=/usr/bin", "LANG=C.UTF-8", "LC_ALL=de_DE.UTF-8", "LC_TIME=C"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := serverEnv(environ, tt.cfg, tt.goos)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
	if got := serverEnv(nil, ServerConfig{}, "linux"); got == nil {
		t.Error("an empty environment must be an empty, non-nil list (nil means inherit everything)")
	}
	if got := serverEnv([]string{"SystemRoot=C:\\Windows", "Path=C:\\bin"}, ServerConfig{}, "windows"); !cmp.Equal(got, []string{"SystemRoot=C:\\Windows", "Path=C:\\bin"}) {
		t.Errorf("windows env = %v", got)
	}
}

func TestStderrTail(t *testing.T) {
	s := newScrubber(ServerConfig{Env: map[string]string{"KEY": "hunter22"}}, nil)
	l := newLineLogger(slog.New(slog.DiscardHandler), s)
	for i := range 25 {
		_, _ = l.Write([]byte(strings.Repeat("x", i%3) + "line\n"))
	}
	_, _ = l.Write([]byte("\n\nError: bad key hunter22\r\npartial "))
	_, _ = l.Write([]byte("end"))
	got := l.tail()
	if len(got) != maxTailLines {
		t.Fatalf("kept %d lines, want %d: %q", len(got), maxTailLines, got)
	}
	if diff := cmp.Diff([]string{"Error: bad key ***", "partial end"}, got[len(got)-2:]); diff != "" {
		t.Errorf("last lines (-want +got):\n%s", diff)
	}
	long := newLineLogger(slog.New(slog.DiscardHandler), &scrubber{})
	_, _ = long.Write([]byte(strings.Repeat("é", 400) + "\n"))
	if tl := long.tail(); len(tl) != 1 || len(tl[0]) > maxTailLine+len("…") || !strings.HasSuffix(tl[0], "…") {
		t.Errorf("a long line is cut to %d bytes with a mark; got %d bytes", maxTailLine, len(tl[0]))
	}
	if tl := newLineLogger(slog.New(slog.DiscardHandler), &scrubber{}).tail(); tl != nil {
		t.Errorf("tail of nothing = %q", tl)
	}
}

func TestUnavailableErrorWithStderr(t *testing.T) {
	err := &UnavailableError{Server: "x", State: StateDown, RetryIn: time.Second, Err: errors.New("connection closed: EOF"),
		Stderr: []string{"Error: Cannot find module '/srv/x.js'", "Node.js v22"}}
	want := "mcp server \"x\": down (restarting in 1s): connection closed: EOF\nits last stderr lines:\n  Error: Cannot find module '/srv/x.js'\n  Node.js v22"
	if got := err.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
}

func TestPerServerConnectTimeout(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	f.silent["stuck"] = true
	f.silent["patient"] = true
	quick := enabled("stuck")
	quick.ConnectTimeout = 50 * time.Millisecond
	h, _ := testHub(t, f, Options{ConnectTimeout: time.Hour, Backoff: Backoff{Initial: time.Hour}}, quick, enabled("patient"))
	waitState(t, h, "stuck", StateDown)
	if st := statusOf(h, "stuck"); st.LastError != "no answer to initialize within 50ms" {
		t.Errorf("last error = %q", st.LastError)
	}
	if st := statusOf(h, "patient"); st.State != StateConnecting {
		t.Errorf("the other server, on the hub's 1h deadline, is %s", st.State)
	}
	if got := h.Unsettled(); !cmp.Equal(got, []string{"patient"}) {
		t.Errorf("Unsettled = %v, want [patient]", got)
	}
	if h.ConnectTimeout("stuck") != 50*time.Millisecond || h.ConnectTimeout("patient") != time.Hour || h.ConnectTimeout("nope") != 0 {
		t.Errorf("ConnectTimeout = %v, %v, %v", h.ConnectTimeout("stuck"), h.ConnectTimeout("patient"), h.ConnectTimeout("nope"))
	}
}
