package mcphub

import (
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// clockHub is testHub on a fake clock, without pings, whose timers would come between the ones
// these tests wait for (pingHub has them).
func clockHub(t *testing.T, f *fakeNet, clk *fakeClock, b Backoff, servers ...ServerConfig) *Hub {
	t.Helper()
	h := New(Options{Servers: servers, Log: testLogger(t), Backoff: b, PingInterval: -1})
	h.dial, h.clock = f.dial, clk
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// TestBackoffResetsAfterStablePeriod: the waits between attempts double while a server keeps
// failing, and start again from the first once it has stayed up for StableAfter; a connection
// that dies sooner goes on from where the waits were.
func TestBackoffResetsAfterStablePeriod(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	f.servers["srv"] = newTestServer("srv", nil)
	f.refuse["srv"] = errors.New("not yet")
	clk := newFakeClock()
	b := Backoff{Initial: time.Second, Max: 30 * time.Second, StableAfter: time.Minute}
	h := clockHub(t, f, clk, b, enabled("srv"))

	// down waits for the server to be down for the next time, with the given wait before its
	// next attempt. Attempts that fail at once pass through connecting too fast to be seen, so
	// the count of restarts tells one down from the next.
	restarts := 0
	down := func(want time.Duration) {
		t.Helper()
		restarts++
		waitFor(t, h, "down, retrying in "+want.String(), func() bool {
			st := statusOf(h, "srv")
			return st.State == StateDown && st.Restarts == restarts
		})
		clk.waitTimer(t)
		if got := time.Duration(statusOf(h, "srv").RetryInMs) * time.Millisecond; got != want {
			t.Fatalf("down #%d: retry in %v, want %v", restarts, got, want)
		}
	}
	retry := func(d time.Duration) { t.Helper(); clk.Advance(d) }

	down(time.Second)
	retry(time.Second)
	down(2 * time.Second)
	retry(2 * time.Second)
	down(4 * time.Second)

	// It comes back, and dies again 5 s later: not stable, so the waits go on growing.
	f.mu.Lock()
	delete(f.refuse, "srv")
	f.mu.Unlock()
	retry(4 * time.Second)
	waitState(t, h, "srv", StateReady)
	clk.Advance(5 * time.Second)
	f.kill("srv")
	down(8 * time.Second)

	// Back again, up for a minute: recovered, so the next crash is retried after the first wait.
	retry(8 * time.Second)
	waitState(t, h, "srv", StateReady)
	clk.Advance(time.Minute)
	f.kill("srv")
	down(time.Second)
	retry(time.Second)
	waitState(t, h, "srv", StateReady)
	clk.Advance(time.Second)
	f.kill("srv")
	down(2 * time.Second)
}

// A server that announces a change at every listing was listed again at once, for ever, in a
// busy loop on both sides; listings after list_changed are now a second apart at least.
func TestListChangedAtEveryListingIsPaced(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	var lists atomic.Int32
	f.raw["chatty"] = func(p *rawPeer, method string, _, _ json.RawMessage) any {
		if method != "tools/list" {
			return nil
		}
		lists.Add(1)
		p.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
		return map[string]any{"tools": []any{}}
	}
	clk := newFakeClock()
	h := clockHub(t, f, clk, Backoff{}, enabled("chatty"))
	waitState(t, h, "chatty", StateReady)
	// The first listing's announcement is listed at once; the second's waits for the clock.
	clk.waitTimer(t)
	if n := lists.Load(); n != 2 {
		t.Errorf("%d listings before the first wait, want 2", n)
	}
	clk.Advance(relistGap)
	waitFor(t, h, "the third listing", func() bool { return lists.Load() == 3 })
	clk.waitTimer(t)
	if n := lists.Load(); n != 3 {
		t.Errorf("%d listings before the second wait, want 3", n)
	}
}
