package mcphub

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// A server that sends a request whose id is an object breaks the JSON-RPC stream (the SDK ends
// the session: "invalid ID type"). The server is then down and restarted, never "ready" with
// every call failing.
func TestServerRequestWithObjectIDTakesItDown(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	t.Cleanup(f.rawWG.Wait)
	f.raw["odd"] = func(p *rawPeer, method string, id, _ json.RawMessage) any {
		if method != "tools/list" {
			return nil
		}
		p.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"tools": []any{}}})
		_ = p.line(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`)
		return nil
	}
	h, _ := testHub(t, f, Options{Backoff: Backoff{Initial: time.Hour}, PingInterval: -1}, enabled("odd"))
	waitState(t, h, "odd", StateDown)
	if st := statusOf(h, "odd"); !strings.Contains(st.LastError, "ID") && !strings.Contains(st.LastError, "id") {
		t.Errorf("last error = %q, want the bad id named", st.LastError)
	}
}
