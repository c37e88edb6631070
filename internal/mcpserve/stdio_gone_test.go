//go:build unix

package mcpserve

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestStdioClientGoneBeforeAnswer: a client that goes away (closes its end of the server's
// stdout, then of its stdin) with a call unanswered leaves a server that ends as it does at the
// end of its input, closing what it holds, instead of one killed by SIGPIPE at the answer's write
// to file descriptor 1.
func TestStdioClientGoneBeforeAnswer(t *testing.T) {
	cmd, in, out := startStdioHelper(t)
	if _, err := io.WriteString(in, drainInit+"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	_ = out.Close() // the client is gone: nothing reads the answers any more
	_, _ = io.WriteString(in, drainInitialized+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`+"\n")
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("the server ended with %v (%v), want a normal exit", err, cmd.ProcessState)
	}
}

// startStdioHelper starts this test binary as a stdio server (TestHelperStdioServer) with pipes
// on its stdin and stdout, killed after a minute at the latest.
func startStdioHelper(t *testing.T) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestHelperStdioServer$")
	cmd.Env = append(os.Environ(), "NODMIX_MCPSERVE_HELPER=stdio")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, in, out
}
