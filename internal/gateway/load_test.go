package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/leaktest"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
	"github.com/nodmix/nodmix/internal/session"
)

// The gateway's own cost per turn and its behaviour under load, against the mock provider.

func quietModel(*llmtest.Seen) llmtest.Reply { return llmtest.Reply{Text: "pong from the mock model"} }

// newStack is a mock provider and a gateway in front of it, with no tools (the turn is the
// provider call alone). persistent keeps sessions in SQLite under a temp home.
func newStack(tb testing.TB, persistent bool) (mock *llmtest.Server, gw *httptest.Server, a *app.App) {
	tb.Helper()
	mock = llmtest.NewOpenAI(quietModel)
	tb.Cleanup(mock.Close)
	cfg := fmt.Sprintf(`{
  models: {providers: {mock: {baseUrl: %q, api: "openai-completions", apiKey: "sk-bench", models: [{id: "m"}]}}},
  agents: {defaults: {model: "mock/m"}},
  tools: {deny: ["*"]},
}`, mock.URL+"/v1")
	a = newApp(tb, cfg, persistent)
	gw = httptest.NewServer(gateway.WithAPI(http.NotFoundHandler(), &gateway.API{Agent: a}))
	tb.Cleanup(gw.Close)
	return mock, gw, a
}

func do(tb testing.TB, c *http.Client, url, body, session string) time.Duration {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-bench")
	if session != "" {
		req.Header.Set("X-Nodmix-Session", session)
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "pong") {
		tb.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return d
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// BenchmarkGatewayAddedCost runs the same completion straight to the mock and through the
// gateway, interleaved, and reports the median and p99 of the difference per turn.
func BenchmarkGatewayAddedCost(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "plain"
		if stream {
			name = "stream"
		}
		b.Run(name, func(b *testing.B) {
			mock, gw, _ := newStack(b, false)
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			body := fmt.Sprintf(`{"model":"mock/m","stream":%v,"messages":[{"role":"user","content":"ping"}]}`, stream)
			direct := strings.Replace(body, "mock/m", "m", 1)
			// Warm both paths (connections, first-use work).
			for range 20 {
				do(b, c, mock.URL+"/v1/chat/completions", direct, "")
				do(b, c, gw.URL+"/v1/chat/completions", body, "")
			}
			var diffs []time.Duration
			for b.Loop() {
				d1 := do(b, c, mock.URL+"/v1/chat/completions", direct, "")
				d2 := do(b, c, gw.URL+"/v1/chat/completions", body, "")
				diffs = append(diffs, d2-d1)
			}
			b.ReportMetric(float64(percentile(diffs, 0.5).Microseconds()), "µs-added-p50")
			b.ReportMetric(float64(percentile(diffs, 0.99).Microseconds()), "µs-added-p99")
			directAllocs := testing.AllocsPerRun(50, func() { do(b, c, mock.URL+"/v1/chat/completions", direct, "") })
			gwAllocs := testing.AllocsPerRun(50, func() { do(b, c, gw.URL+"/v1/chat/completions", body, "") })
			b.ReportMetric(gwAllocs-directAllocs, "allocs-added/turn")
		})
	}
}

// load runs sessions × turns concurrently against a persistent gateway and returns the
// latencies and the wall time.
func load(tb testing.TB, gw *httptest.Server, sessions, turns int) ([]time.Duration, time.Duration) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: sessions}}
	defer c.CloseIdleConnections()
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := range turns {
				body := fmt.Sprintf(`{"model":"mock/m","messages":[{"role":"user","content":"turn %d"}]}`, i)
				mine = append(mine, do(tb, c, gw.URL+"/v1/chat/completions", body, fmt.Sprintf("load-%d", s)))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, time.Since(start)
}

func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// TestLoadKeepsEverythingAndLeaksNothing: concurrent sessions on the SQLite store end with every
// message kept, one row per session, and no goroutine or file descriptor left behind.
func TestLoadKeepsEverythingAndLeaksNothing(t *testing.T) {
	leaktest.Check(t)
	fds := openFDs()
	mock, gw, a := newStack(t, true)
	const sessions, turns = 10, 10
	lat, wall := load(t, gw, sessions, turns)
	rows, err := session.AllSessions(context.Background(), a.Store)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != sessions {
		t.Errorf("session rows = %d, want %d", len(rows), sessions)
	}
	for _, r := range rows {
		if r.Messages != 2*turns {
			t.Errorf("session %s holds %d messages, want %d", r.Key, r.Messages, 2*turns)
		}
	}
	// Everything the stack opened ends with it: listeners, connections, the store.
	gw.CloseClientConnections()
	gw.Close()
	mock.CloseClientConnections()
	mock.Close()
	if err := a.Close(); err != nil {
		t.Error(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for fds >= 0 && openFDs() > fds+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := openFDs(); fds >= 0 && got > fds+2 {
		t.Errorf("file descriptors: %d before, %d after", fds, got)
	}
	t.Logf("%d turns in %v (%.0f turns/s), p50 %v, p99 %v", len(lat), wall, float64(len(lat))/wall.Seconds(), percentile(lat, 0.5), percentile(lat, 0.99))
}

// BenchmarkLoad50x100 is the load run: 50 concurrent sessions × 100 turns on SQLite.
func BenchmarkLoad50x100(b *testing.B) {
	for b.Loop() {
		_, gw, a := newStack(b, true)
		lat, wall := load(b, gw, 50, 100)
		rows, _ := session.AllSessions(context.Background(), a.Store)
		if len(rows) != 50 {
			b.Fatalf("rows = %d", len(rows))
		}
		b.ReportMetric(float64(len(lat))/wall.Seconds(), "turns/s")
		b.ReportMetric(float64(percentile(lat, 0.5).Microseconds())/1000, "ms-p50")
		b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "ms-p99")
	}
}
