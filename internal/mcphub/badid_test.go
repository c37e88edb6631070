package mcphub

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// A server's request whose id the SDK would change (1.5 answered as 1, 1e3 as 1000, an integer
// beyond 2^53 rounded) is answered by the hub with invalid request and the id as the server
// wrote it, and the session goes on; any other id comes back as written in the SDK's answer.
func TestServerRequestIDsComeBackAsWritten(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	t.Cleanup(f.rawWG.Wait)
	refused := []string{`1.5`, `1e3`, `9007199254740993`, `-0`, `"\ud800"`}
	kept := []string{`7`, `9007199254740991`, `"a"`}
	answers := make(chan string, len(refused)+len(kept))
	f.raw["odd"] = func(p *rawPeer, method string, id, _ json.RawMessage) any {
		if method != "tools/list" {
			return nil
		}
		p.answers = answers
		p.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"tools": []any{}}})
		for _, id := range append(refused, kept...) {
			_ = p.line(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		}
		return nil
	}
	h, _ := testHub(t, f, Options{Backoff: Backoff{Initial: time.Hour}, PingInterval: -1}, enabled("odd"))
	waitState(t, h, "odd", StateReady)
	got := map[string]string{}
	for range len(refused) + len(kept) {
		var line string
		select {
		case line = <-answers:
		case <-time.After(10 * time.Second):
			t.Fatalf("answers so far: %v", got)
		}
		var a struct {
			ID    json.RawMessage
			Error *struct {
				Code    int64
				Message string
			}
		}
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		switch {
		case a.Error == nil:
			got[string(a.ID)] = "result"
		case a.Error.Code == -32600 && strings.Contains(a.Error.Message, "invalid id"):
			got[string(a.ID)] = "refused"
		default:
			got[string(a.ID)] = line
		}
	}
	want := map[string]string{}
	for _, id := range refused {
		want[id] = "refused"
	}
	for _, id := range kept {
		want[id] = "result"
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers by id as written (-want +got):\n%s", diff)
	}
	if st := statusOf(h, "odd"); st.State != StateReady {
		t.Errorf("state = %s (%s), want ready", st.State, st.LastError)
	}
}
