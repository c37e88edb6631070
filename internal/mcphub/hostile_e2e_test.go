//go:build unix

package mcphub

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// deafServer is a stdio server in sh: after initialize it reads the tools/list request, sends
// $PINGS pings with long ids, answers the listing and never reads its stdin again, so the hub's
// answers to the pings (all read before the server is ready) fill the pipe and the rest block.
const deafServer = `read line
printf '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + protocolVersion + `","capabilities":{"tools":{}},"serverInfo":{"name":"deaf","version":"1"}}}\n'
read line
read line
i=0
while [ $i -lt "$PINGS" ]; do printf '{"jsonrpc":"2.0","id":"%s%d","method":"ping"}\n' "$PAD" $i; i=$((i+1)); done
printf '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}\n'
exec sleep 1000
`

// Closing a stdio server whose stdin is full waited forever: the SDK waits for the answers it
// owes the server to be written before it closes the connection, and so before stdin closes.
// After the terminate grace stdin closes, the writes fail, and the server is ended as usual.
func TestStdioCloseDoesNotWaitForUnreadAnswers(t *testing.T) {
	leaktest.Check(t)
	cfg := stdioServer("deaf", "sh", []string{"-c", deafServer})
	cfg.Env = map[string]string{"PAD": strings.Repeat("p", 1000), "PINGS": "200"}
	h, _ := e2eHub(t, Options{TerminateGrace: 100 * time.Millisecond}, cfg)
	waitState(t, h, "deaf", StateReady)
	closeWithin(t, h)
}

// A call to a stdio server that does not read its stdin waited forever behind the blocked
// writes, whatever its timeout: now it fails at its deadline, naming the server, and the
// connection, whose stream may be cut, ends.
func TestStdioCallToDeafServerTimesOut(t *testing.T) {
	leaktest.Check(t)
	cfg := stdioServer("deaf", "sh", []string{"-c", deafServer})
	cfg.Env = map[string]string{"PAD": strings.Repeat("p", 1000), "PINGS": "200"}
	cfg.Timeout = 200 * time.Millisecond
	h, _ := e2eHub(t, Options{TerminateGrace: 100 * time.Millisecond, Backoff: Backoff{Initial: time.Hour}}, cfg)
	waitState(t, h, "deaf", StateReady)
	d, _ := h.server("deaf")
	done := make(chan error, 1)
	go func() {
		_, err := d.callTool(t.Context(), "x", json.RawMessage(`{"a":"`+strings.Repeat("a", 100<<10)+`"}`))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.HasPrefix(err.Error(), `mcp server "deaf": call to tool "x" timed out after 200ms`) {
			t.Errorf("call = %v, want an error naming the server and the call", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end")
	}
	waitState(t, h, "deaf", StateDown)
	closeWithin(t, h)
}

// A call's write that a deaf server's full stdin blocks, with no other write waiting, still ends
// the session at the call's deadline: the SDK breaks a connection only at a write whose own
// context has not ended, which the call's has, but the cancellation it sends next is such a
// write, and it fails. (The connection must not stay ready with half a message in the stdin.)
func TestStdioLoneCutWriteEndsTheSession(t *testing.T) {
	leaktest.Check(t)
	cfg := stdioServer("deaf", "sh", []string{"-c", deafServer})
	cfg.Env = map[string]string{"PINGS": "0"}
	// Long enough for the 1 MiB call to be encoded and its write begun on a loaded machine: a
	// deadline that passes before the write leaves the stream whole, and the session rightly up.
	cfg.Timeout = 2 * time.Second
	h, _ := e2eHub(t, Options{TerminateGrace: 100 * time.Millisecond, Backoff: Backoff{Initial: time.Hour}}, cfg)
	waitState(t, h, "deaf", StateReady)
	d, _ := h.server("deaf")
	_, err := d.callTool(t.Context(), "x", json.RawMessage(`{"a":"`+strings.Repeat("a", 1<<20)+`"}`))
	if err == nil || !strings.HasPrefix(err.Error(), `mcp server "deaf": call to tool "x" timed out after 2s`) {
		t.Errorf("call = %v, want a timeout naming the server and the call", err)
	}
	waitState(t, h, "deaf", StateDown)
	if st := d.status(); !strings.Contains(st.LastError, "it does not read its stdin") {
		t.Errorf("last error = %q, want it to say the server does not read", st.LastError)
	}
	closeWithin(t, h)
}
