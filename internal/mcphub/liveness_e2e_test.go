//go:build unix

package mcphub

import (
	"strings"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// hungServer is a stdio server in sh that answers initialize and the listing, then reads its
// stdin for ever and answers nothing: a server stuck in a deadlock.
const hungServer = `read line
printf '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + protocolVersion + `","capabilities":{"tools":{}},"serverInfo":{"name":"hung","version":"1"}}}\n'
read line
read line
printf '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}\n'
while read -r line; do :; done
`

// A real process that hangs but reads its stdin goes down over its unanswered ping and comes
// back: ready, then down naming the ping, then ready again after its restart.
func TestE2EHungStdioServerIsRestarted(t *testing.T) {
	leaktest.Check(t)
	cfg := stdioServer("hung", "sh", []string{"-c", hungServer})
	h, _ := e2eHub(t, Options{PingInterval: 50 * time.Millisecond, PingTimeout: 2 * time.Second}, cfg)
	waitState(t, h, "hung", StateReady)
	waitFor(t, h, "the server down over its ping", func() bool {
		st := statusOf(h, "hung")
		return st.State == StateDown && strings.HasPrefix(st.LastError, "no answer to a ping within 2s")
	})
	waitFor(t, h, "the server back after its restart", func() bool {
		st := statusOf(h, "hung")
		return st.State == StateReady && st.Restarts >= 1
	})
}
