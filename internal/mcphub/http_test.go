package mcphub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// goHTTPServer serves a Go MCP server over streamable HTTP and requires the bearer token.
func goHTTPServer(t *testing.T, s *mcp.Server, token string) *httptest.Server {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
		ts.Close()
	})
	return ts
}

func TestHTTPServerWithHeadersAndSessionExpiry(t *testing.T) {
	leaktest.Check(t)
	s := newTestServer("web", nil)
	const token = "tok-0123456789"
	ts := goHTTPServer(t, s, token)
	url := ts.URL + "/mcp?key=query-secret-value"
	log, logged := captureLog(t)
	h, _ := testHub(t, nil, Options{PingInterval: 50 * time.Millisecond, Log: log},
		ServerConfig{Name: "web", URL: url, Headers: map[string]string{"Authorization": "Bearer " + token}, Enabled: true},
		ServerConfig{Name: "wrong", URL: url, Headers: map[string]string{"Authorization": "Bearer not-the-token"}, Enabled: true},
	)
	waitState(t, h, "web", StateReady)
	waitState(t, h, "wrong", StateDown)
	if res, err := callByID(t, h, "mcp:web:echo", `{"message":"over http"}`); err != nil || res.Text() != "web: over http" {
		t.Fatalf("echo = %v, %v", res, err)
	}
	for _, st := range h.Status() {
		all := st.Target + " " + st.LastError
		for _, secret := range []string{token, "not-the-token", "query-secret-value"} {
			if strings.Contains(all, secret) {
				t.Errorf("status of %s shows a secret: %+v", st.Name, st)
			}
		}
		if st.Transport != "http" || !strings.HasSuffix(st.Target, "/mcp?…") {
			t.Errorf("status %+v", st)
		}
	}
	if st := statusOf(h, "wrong"); !strings.Contains(st.LastError, "Unauthorized") {
		t.Errorf("wrong token: last error %q", st.LastError)
	}

	// The server forgets the session: the keepalive notices, the hub connects anew.
	before := statusOf(h, "web").Restarts
	for ss := range s.Sessions() {
		_ = ss.Close()
	}
	waitFor(t, h, "a new session", func() bool {
		st := statusOf(h, "web")
		return st.Restarts > before && st.State == StateReady
	})
	if res, err := callByID(t, h, "mcp:web:echo", `{"message":"again"}`); err != nil || res.Text() != "web: again" {
		t.Fatalf("echo after expiry = %v, %v", res, err)
	}
	_ = h.Close()
	out := logged.String()
	if !strings.Contains(out, "mcp server down") {
		t.Errorf("the log does not tell of the expired session:\n%s", out)
	}
	for _, secret := range []string{token, "not-the-token", "query-secret-value"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log shows the secret %q:\n%s", secret, out)
		}
	}
}

// The configured headers go to the configured endpoint only. A server that redirects elsewhere
// (another host, or plain http) must not receive them there: Go's client drops Authorization on
// such a redirect, and the hub added the headers back to every request it sent.
func TestHTTPHeadersNotSentAfterRedirectElsewhere(t *testing.T) {
	leaktest.Check(t)
	got := make(chan http.Header, 10)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		http.Error(w, "gone", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	// The same loopback server under another host name.
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirecting.Close)
	const token = "tok-redirect-0123456789"
	h, _ := testHub(t, nil, Options{Backoff: Backoff{Initial: time.Hour}},
		ServerConfig{Name: "web", URL: redirecting.URL + "/mcp", Enabled: true,
			Headers: map[string]string{"Authorization": "Bearer " + token, "X-Api-Key": token}})
	waitState(t, h, "web", StateDown)
	select {
	case hdr := <-got:
		for _, k := range []string{"Authorization", "X-Api-Key"} {
			if v := hdr.Get(k); strings.Contains(v, token) {
				t.Errorf("the host redirected to got %s: %s", k, v)
			}
		}
	default:
		t.Fatal("the redirect was not followed")
	}
}

// A url server's JSON answer is bounded as a stdio server's message is (16 MiB): the SDK reads
// a JSON response (or an error's body) whole, so an endless one grew without bound.
func TestHTTPHugeResponseIsCutOff(t *testing.T) {
	leaktest.Check(t)
	const total = 64 << 20
	var written atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte(`{"jsonrpc":"2.0","id":1,"result":{"x":"` + strings.Repeat("x", 1<<20))
		for written.Load() < total {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(ts.Close)
	h, _ := testHub(t, nil, Options{Backoff: Backoff{Initial: time.Hour}}, ServerConfig{Name: "web", URL: ts.URL + "/mcp", Enabled: true})
	waitState(t, h, "web", StateDown)
	_ = h.Close()
	ts.Close() // waits for the handler
	if st := statusOf(h, "web"); !strings.Contains(st.LastError, "response body exceeds 16 MiB") {
		t.Errorf("last error = %q, want the bound named", st.LastError)
	}
	if n := written.Load(); n >= total {
		t.Errorf("the hub read all %d bytes of the answer", n)
	}
}

// A body of exactly the bound reads whole; one byte more fails.
func TestLimitedBody(t *testing.T) {
	for _, tc := range []struct {
		size int
		err  error
	}{{0, nil}, {maxFrameBytes, nil}, {maxFrameBytes + 1, errBodyTooLarge}, {3 * maxFrameBytes, errBodyTooLarge}} {
		b := &limitedBody{ReadCloser: io.NopCloser(strings.NewReader(strings.Repeat("x", tc.size))), left: maxFrameBytes}
		got, err := io.ReadAll(b)
		if !errors.Is(err, tc.err) || len(got) > maxFrameBytes || (tc.err == nil && len(got) != tc.size) {
			t.Errorf("body of %d bytes: read %d, err %v, want err %v", tc.size, len(got), err, tc.err)
		}
	}
}

// hangingAnswersServer is a streamable HTTP server that sends pings on its event stream and
// never answers the POSTs that carry the hub's answers to them.
func hangingAnswersServer(t *testing.T, pings int) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", "s1")
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range pings {
				if _, err := fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":\"ping\"}\n\n", i); err != nil {
					return
				}
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		case http.MethodDelete:
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}}}`, m.ID, m.Params.ProtocolVersion)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, m.ID)
		case "": // an answer of the hub's
			<-r.Context().Done()
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// closeWithin closes the hub, failing the test if that does not end.
func closeWithin(t *testing.T, h *Hub) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.Close()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
}

// The hub's answer to a url server's ping goes in a POST; a server that never answers that POST
// held Close forever (the SDK waits for the answer to be sent, and the request had no end).
func TestHTTPCloseDoesNotWaitForHangingAnswers(t *testing.T) {
	leaktest.Check(t)
	ts := hangingAnswersServer(t, 1)
	h, _ := testHub(t, nil, Options{PingInterval: -1, TerminateGrace: 100 * time.Millisecond},
		ServerConfig{Name: "web", URL: ts.URL + "/mcp", Enabled: true})
	waitState(t, h, "web", StateReady)
	closeWithin(t, h)
}

// blockingRoundTripper holds every request until its context ends.
type blockingRoundTripper struct{ started chan struct{} }

func (b blockingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	b.started <- struct{}{}
	<-req.Context().Done()
	return nil, req.Context().Err()
}

// The SDK answers each request of a url server in a POST of its own: a server that sent many and
// never answered those POSTs held a goroutine and a connection for each. At most maxUnanswered
// requests wait for the server at once; one more fails at once, and abort ends those waiting.
func TestHTTPRequestsWaitingForTheServerAreBounded(t *testing.T) {
	leaktest.Check(t)
	abort, cancel := context.WithCancel(t.Context())
	base := blockingRoundTripper{started: make(chan struct{})}
	ht := newHeaderTransport(base, "http://example.com/mcp", nil, abort)
	errs := make(chan error, maxUnanswered)
	for range maxUnanswered {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, "http://example.com/mcp", nil)
			_, err := ht.RoundTrip(req)
			errs <- err
		}()
		<-base.started
	}
	req, _ := http.NewRequest(http.MethodPost, "http://example.com/mcp", nil)
	if _, err := ht.RoundTrip(req); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d requests", maxUnanswered)) {
		t.Errorf("request past the bound: %v, want the bound named", err)
	}
	cancel()
	for range maxUnanswered {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("a waiting request after abort: %v", err)
		}
	}
}
