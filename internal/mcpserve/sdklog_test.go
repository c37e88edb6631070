package mcpserve

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// syncLog is a text log safe for concurrent use.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) lines(level string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.SplitSeq(l.buf.String(), "\n") {
		if strings.Contains(line, "level="+level) {
			out = append(out, line)
		}
	}
	return out
}

// TestClientMistakesAreNotErrors: a client that sends notifications/initialized again and again
// (or initialize twice) gets no ERROR line in nodmix's log, only one WARN line per session, on
// both faces.
func TestClientMistakesAreNotErrors(t *testing.T) {
	leaktest.Check(t)
	var log syncLog
	srv := New(newFakeSessions(), Options{Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(func() { _ = srv.Close() })
	p := newStdioPeer(t, srv, false)
	ts := httpServer(t, srv)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	url := ts.URL + "/mcp"
	resp, _ := post(t, url, rawInit, nil)
	h := map[string]string{sessionHeader: resp.Header.Get(sessionHeader), "Mcp-Protocol-Version": "2025-11-25"}
	p.send(rawInit)
	p.rawReply()
	for range 3 {
		post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	post(t, url, strings.Replace(rawInit, `"id":1`, `"id":2`, 1), h)
	p.send(strings.Replace(rawInit, `"id":1`, `"id":2`, 1))
	p.rawReply()
	// A ping answered after them on each face: the SDK has handled (and logged) them by then.
	post(t, url, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, h)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	p.rawReply()

	if errs := log.lines("ERROR"); len(errs) > 0 {
		t.Errorf("a client's protocol mistakes were logged as errors:\n%s", strings.Join(errs, "\n"))
	}
	warns := log.lines("WARN")
	if len(warns) != 2 || !strings.Contains(strings.Join(warns, "\n"), "mcp client protocol mistake: duplicate initialized notification") {
		t.Errorf("warnings = %q, want one per session (2) about the duplicate notification", warns)
	}
}

// TestSDKLogKeepsRealErrors: the SDK logger passes every record but a client's mistakes as it is.
func TestSDKLogKeepsRealErrors(t *testing.T) {
	var log syncLog
	l := sdkLog(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))).With("session", "s1")
	l.Error("server session ended with error", "error", "broken pipe")
	l.Error("duplicate initialized notification")
	l.Error("initialized before initialize")
	l.Info("session initialized")
	got := [][]string{log.lines("ERROR"), log.lines("WARN"), log.lines("INFO")}
	for i := range got[:2] {
		for j, line := range got[i] {
			_, got[i][j], _ = strings.Cut(line, " level=")
		}
	}
	want := [][]string{
		{`ERROR msg="server session ended with error" session=s1 error="broken pipe"`},
		{`WARN msg="mcp client protocol mistake: duplicate initialized notification" session=s1 note="later protocol mistakes of this client are not logged"`},
		nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}
