//go:build linux

package mcpserve

import (
	"bufio"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// TestCloseWithStdioOutputFull: Server.Close ends a stdio session whose client does not read
// its answers (one larger than the pipe holds is being written), as ending Serve's context
// does, instead of waiting for that write for good.
func TestCloseWithStdioOutputFull(t *testing.T) {
	leaktest.Check(t)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			_ = f.Close()
		}
	})
	srv := New(newFakeSessions(), Options{})
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(t.Context(), inR, outW) }()
	r := bufio.NewReader(outR)
	if _, err := io.WriteString(inW, drainInit+"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1<<20)
	if _, err := io.WriteString(inW, drainInitialized+"\n"+`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+big+`"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	// Its first 64 KiB arrive: the rest, more than a pipe holds, is being written.
	if _, err := io.ReadFull(r, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		_ = srv.Close()
		close(closed)
	}()
	deadline := time.After(30 * time.Second) // a hang guard, not a measure
	select {
	case <-closed:
	case <-deadline:
		_ = outR.Close() // lets the write fail, so that the test ends
		<-closed
		t.Fatal("Close waited for a write the client does not read")
	}
	if err := <-served; err != nil {
		t.Errorf("ServeStdio = %v", err)
	}
}
