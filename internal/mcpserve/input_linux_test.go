//go:build linux

package mcpserve

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// blockingPipe is a pipe in blocking mode, as a parent hands a child its stdin.
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "in"), os.NewFile(uintptr(fds[1]), "in-w")
	t.Cleanup(func() {
		_ = r.Close()
		_ = w.Close()
	})
	return r, w
}

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// TestPollableInput: a blocking pipe is reopened for the poller and its own mode kept; other
// inputs are left as they are.
func TestPollableInput(t *testing.T) {
	r, w := blockingPipe(t)
	f := pollableInput(r)
	if f == nil {
		t.Skip("/proc does not reopen the pipe here")
	}
	defer f.Close()
	if nonblocking(t, r) {
		t.Error("the original pipe was made non-blocking")
	}
	if _, err := w.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	if _, err := io.ReadFull(f, buf); err != nil || string(buf) != "ab" {
		t.Errorf("read through the reopened pipe = %q, %v", buf, err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for name, in := range map[string]io.Reader{"a pollable pipe": pr, "not a file": io.MultiReader()} {
		if f := pollableInput(in); f != nil {
			_ = f.Close()
			t.Errorf("%s was reopened", name)
		}
	}
}

// TestStdioOverBlockingPipe serves a session over a blocking pipe, as `nodmix mcp serve` gets
// its stdin, and ends it with the context while the client holds its end open: the read
// through the reopened pipe ends at once.
func TestStdioOverBlockingPipe(t *testing.T) {
	leaktest.Check(t)
	sessions := newFakeSessions()
	srv := New(sessions, Options{SessionID: "pipe"})
	t.Cleanup(func() { _ = srv.Close() })
	inR, inW := blockingPipe(t)
	outR, outW := io.Pipe()
	defer outR.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(ctx, inR, outW) }()
	p := &stdioPeer{t: t, in: inW, out: bufio.NewReader(outR)}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if got := p.reply(); got["id"] != float64(1) || got["error"] != nil {
		t.Errorf("ping = %v", got)
	}
	endsOnCancel(t, cancel, served)
}

// TestStdioShutdownWithOutputFull: a server whose client does not read its stdout (an answer
// larger than the pipe holds is being written) still ends on SIGTERM, as it does while the
// client keeps stdin open, instead of waiting for that write for good.
func TestStdioShutdownWithOutputFull(t *testing.T) {
	cmd, in, out := startStdioHelper(t)
	t.Cleanup(func() { _ = in.Close() })
	r := bufio.NewReader(out)
	for _, line := range []string{drainInit, `{"jsonrpc":"2.0","id":2,"method":"ping"}`} {
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	// From now on nothing reads: the answer fills the pipe and its write waits.
	big := strings.Repeat("x", 1<<20)
	if _, err := io.WriteString(in, drainInitialized+"\n"+`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+big+`"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	// Its first 64 KiB arrive: the rest, more than a pipe holds, is being written.
	if _, err := io.ReadFull(r, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM the server ended with %v, want a normal exit", err)
	}
}
