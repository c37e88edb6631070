package mcphub

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/leaktest"
)

const (
	testPingInterval = 30 * time.Second
	testPingTimeout  = 10 * time.Second
)

// pingHub is a hub on a fake clock with the test ping settings and a restart a second after a
// failure.
func pingHub(t *testing.T, f *fakeNet, clk *fakeClock, servers ...ServerConfig) *Hub {
	t.Helper()
	h := New(Options{Servers: servers, Log: testLogger(t), PingInterval: testPingInterval, PingTimeout: testPingTimeout,
		Backoff: Backoff{Initial: time.Second, Max: time.Second, StableAfter: time.Hour}})
	h.dial, h.clock = f.dial, clk
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func receive(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// A stdio server that hangs while it still reads its stdin stayed ready for ever: each call timed
// out on its own and the server was never restarted. An idle server is pinged now, and one that
// does not answer is marked down, saying why, and restarted.
func TestHungServerIsRestarted(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	t.Cleanup(f.rawWG.Wait)
	pinged := make(chan struct{}, 10)
	list := toolsList(`{"name":"t","inputSchema":{"type":"object"}}`)
	f.raw["hung"] = func(p *rawPeer, method string, id, params json.RawMessage) any {
		if method == "ping" {
			pinged <- struct{}{}
			return nil // read, never answered
		}
		return list(p, method, id, params)
	}
	clk := newFakeClock()
	h := pingHub(t, f, clk, enabled("hung"))
	waitState(t, h, "hung", StateReady)
	t0 := clk.Now()

	clk.waitTimerAt(t, t0.Add(testPingInterval))
	clk.Advance(testPingInterval)
	receive(t, pinged, "the ping")
	clk.waitTimerAt(t, t0.Add(testPingInterval+testPingTimeout))
	clk.Advance(testPingTimeout)
	waitState(t, h, "hung", StateDown)

	const why = "no answer to a ping within 10s: the server seems hung"
	if st := statusOf(h, "hung"); st.LastError != why || st.Restarts != 1 {
		t.Errorf("status %+v, want last error %q and 1 restart", st, why)
	}
	if _, err := callByID(t, h, "mcp:hung:t", `{}`); err == nil || !strings.HasPrefix(err.Error(), `mcp server "hung": down (restarting in 1s): `+why) {
		t.Errorf("call to the hung server: %v, want the server and the ping named", err)
	}

	clk.waitTimerAt(t, t0.Add(testPingInterval+testPingTimeout+time.Second))
	clk.Advance(time.Second)
	waitState(t, h, "hung", StateReady)
	if n := f.dialCount("hung"); n != 2 {
		t.Errorf("%d connections, want 2 (a restart)", n)
	}
}

// A server that answers its ping late, but within the ping timeout, is alive: it stays up, and the
// next ping is an interval after the answer.
func TestSlowPingAnswerKeepsTheServer(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	t.Cleanup(f.rawWG.Wait)
	pinged, release := make(chan struct{}, 10), make(chan struct{})
	f.raw["slow"] = func(p *rawPeer, method string, id, params json.RawMessage) any {
		switch method {
		case "ping":
			pinged <- struct{}{}
			<-release
			return map[string]any{}
		case "tools/list":
			return map[string]any{"tools": []any{}}
		}
		return nil
	}
	clk := newFakeClock()
	h := pingHub(t, f, clk, enabled("slow"))
	waitState(t, h, "slow", StateReady)
	t0 := clk.Now()

	clk.waitTimerAt(t, t0.Add(testPingInterval))
	clk.Advance(testPingInterval)
	receive(t, pinged, "the ping")
	clk.waitTimerAt(t, t0.Add(testPingInterval+testPingTimeout))
	clk.Advance(testPingTimeout - time.Millisecond)
	close(release)
	// The answer is in: the next check waits a whole interval from it.
	answeredAt := t0.Add(testPingInterval + testPingTimeout - time.Millisecond)
	clk.waitTimerAt(t, answeredAt.Add(testPingInterval))
	clk.Advance(time.Millisecond) // past the first ping's deadline, which has no effect now
	if st := statusOf(h, "slow"); st.State != StateReady || st.Restarts != 0 || f.dialCount("slow") != 1 {
		t.Errorf("status %+v after %d connections, want ready, never restarted", st, f.dialCount("slow"))
	}
}

// A server busy with a call is not pinged, however long the call: many servers take one request
// at a time, and a ping behind the call would go unanswered and kill a healthy server.
func TestNoPingWhileACallIsInFlight(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	t.Cleanup(f.rawWG.Wait)
	var pings atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	done := func() { once.Do(func() { close(release) }) }
	t.Cleanup(done) // before the raw server is waited for, should the test fail early
	list := toolsList(`{"name":"long","inputSchema":{"type":"object"}}`)
	f.raw["busy"] = func(p *rawPeer, method string, id, params json.RawMessage) any {
		switch method {
		case "ping":
			pings.Add(1)
			return map[string]any{}
		case "tools/call":
			// One request at a time: the server reads nothing until the call is done.
			close(entered)
			<-release
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
		}
		return list(p, method, id, params)
	}
	clk := newFakeClock()
	h := pingHub(t, f, clk, enabled("busy"))
	waitState(t, h, "busy", StateReady)
	t0 := clk.Now()

	type result struct {
		text string
		err  error
	}
	called := make(chan result, 1)
	go func() {
		res, err := callByID(t, h, "mcp:busy:long", `{}`)
		if err != nil {
			called <- result{err: err}
			return
		}
		called <- result{text: res.Text()}
	}()
	receive(t, entered, "the call")
	for i := 1; i <= 3; i++ {
		clk.waitTimerAt(t, t0.Add(time.Duration(i)*testPingInterval))
		clk.Advance(testPingInterval)
	}
	clk.waitTimerAt(t, t0.Add(4*testPingInterval))
	done()
	if r := <-called; r.err != nil || r.text != "done" {
		t.Fatalf("call = %q, %v", r.text, r.err)
	}
	if n := pings.Load(); n != 0 {
		t.Errorf("%d pings during the call, want none", n)
	}
	if st := statusOf(h, "busy"); st.State != StateReady || st.Restarts != 0 {
		t.Errorf("status %+v, want ready, never restarted", st)
	}
}
