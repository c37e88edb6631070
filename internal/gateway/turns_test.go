package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/app"
	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/session"
)

// heldStack is a real persistent app behind the API whose OpenAI-compatible provider answers
// every request with `answer <n>` (n counts requests from 1), holding the first one until
// release is closed. arrived receives once per provider request.
func heldStack(t *testing.T) (a *app.App, gw *httptest.Server, arrived chan int, release chan struct{}) {
	t.Helper()
	arrived, release = make(chan int, 16), make(chan struct{})
	var mu sync.Mutex
	n := 0
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		arrived <- k
		if k == 1 {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"answer %d"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, k)
	}))
	t.Cleanup(provider.Close)
	a = persistentApp(t, mockProvider(provider.URL))
	gw = httptest.NewServer(gateway.WithAPI(http.NotFoundHandler(), &gateway.API{Agent: a}))
	t.Cleanup(gw.Close)
	return a, gw, arrived, release
}

// mockProvider is a config whose default model p/m is an OpenAI-compatible provider at url, with
// no tools.
func mockProvider(url string) string {
	return fmt.Sprintf(`{models: {providers: {p: {baseUrl: %q, api: "openai-completions", apiKey: "sk-test", models: [{id: "m"}]}}}, agents: {defaults: {model: "p/m"}}, tools: {deny: ["*"]}}`, url+"/v1")
}

// persistentApp is a real app with cfg and its sessions in SQLite under a temp home; it closes
// when the test ends.
func persistentApp(t *testing.T, cfg string) *app.App { return newApp(t, cfg, true) }

// newApp is an app of cfg in a temporary home; persistent keeps its sessions in SQLite there.
// It closes when the test ends.
func newApp(tb testing.TB, cfg string, persistent bool) *app.App {
	tb.Helper()
	home := tb.TempDir()
	if err := os.WriteFile(filepath.Join(home, "nodmix.json5"), []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	env := map[string]string{"NODMIX_HOME": home, "HOME": home}
	a, err := app.New(context.Background(), app.Options{Getenv: func(k string) string { return env[k] }, Persistent: persistent})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close() })
	return a
}

type reply struct {
	status int
	body   string
}

func turnOn(gw *httptest.Server, path, body, session string) reply {
	req, _ := http.NewRequest("POST", gw.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set(gateway.SessionHeader, session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{0, err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, string(b)}
}

// transcriptText is a session's transcript as "role: text" lines.
func transcriptText(t *testing.T, a *app.App, key string) []string {
	t.Helper()
	tr, err := a.Store.Transcript(context.Background(), key)
	if err != nil {
		t.Fatalf("transcript %q: %v", key, err)
	}
	var out []string
	for _, m := range tr {
		out = append(out, string(m.Role)+": "+m.Text())
	}
	return out
}

// TestSecondTurnOnABusySessionIsRefused: while a turn runs on a session, a second one on the
// same session is refused with 409 before anything of it is written, and the first turn ends
// as if alone (the documented "refused rather than interleaved").
func TestSecondTurnOnABusySessionIsRefused(t *testing.T) {
	for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
		t.Run(path, func(t *testing.T) {
			a, gw, arrived, release := heldStack(t)
			body := func(text string) string {
				if path == "/v1/responses" {
					return fmt.Sprintf(`{"input":%q}`, text)
				}
				return fmt.Sprintf(`{"messages":[{"role":"user","content":%q}]}`, text)
			}
			first := make(chan reply, 1)
			go func() { first <- turnOn(gw, path, body("first"), "s") }()
			<-arrived // the first turn is with the model
			for _, stream := range []string{"", `,"stream":true`} {
				second := turnOn(gw, path, strings.TrimSuffix(body("second"), "}")+stream+"}", "s")
				if second.status != http.StatusConflict || !strings.Contains(second.body, `"code":"session_busy"`) {
					t.Errorf("second turn (stream %q) = %d %s, want 409 session_busy", stream, second.status, second.body)
				}
			}
			// Another session is not held up.
			if other := turnOn(gw, path, body("elsewhere"), "other"); other.status != http.StatusOK {
				t.Errorf("turn on another session = %d %s", other.status, other.body)
			}
			close(release)
			if r := <-first; r.status != http.StatusOK || !strings.Contains(r.body, "answer 1") {
				t.Errorf("first turn = %d %s", r.status, r.body)
			}
			want := []string{"user: first", "assistant: answer 1"}
			if diff := cmp.Diff(want, transcriptText(t, a, "s")); diff != "" {
				t.Errorf("transcript (-want +got):\n%s", diff)
			}
			// Once the first turn is over the session takes turns again.
			if r := turnOn(gw, path, body("third"), "s"); r.status != http.StatusOK {
				t.Errorf("turn after the first = %d %s", r.status, r.body)
			}
		})
	}
}

// TestSessionKeyWithControlCharacters: a `user` that cannot be sent back in the session header
// is refused naming the field; it neither breaks the response nor starts a session that the
// header the client is given would not find.
func TestSessionKeyWithControlCharacters(t *testing.T) {
	a, gw, _, release := heldStack(t)
	close(release)
	for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
		for _, user := range []string{"a\x00b", "line\r\nX-Injected: 1", "bell\x07", "del\x7f"} {
			u, _ := json.Marshal(user)
			body := fmt.Sprintf(`{"user":%s,"messages":[{"role":"user","content":"hi"}]}`, u)
			if path == "/v1/responses" {
				body = fmt.Sprintf(`{"user":%s,"input":"hi"}`, u)
			}
			r := turnOn(gw, path, body, "")
			var e apiErr
			if err := json.Unmarshal([]byte(r.body), &e); err != nil || r.status != http.StatusBadRequest || e.Error.Param == nil || *e.Error.Param != "user" {
				t.Errorf("%s user %q = %d %s, want 400 naming user", path, user, r.status, r.body)
			}
		}
	}
	// A key the store cannot hold is named too.
	long := strings.Repeat("k", 300)
	if r := turnOn(gw, "/v1/chat/completions", `{"user":"`+long+`","messages":[{"role":"user","content":"hi"}]}`, ""); r.status != http.StatusBadRequest ||
		!strings.Contains(r.body, `"param":"user"`) || !strings.Contains(r.body, `"code":"invalid_session"`) {
		t.Errorf("long user = %d %s, want 400 invalid_session naming user", r.status, r.body)
	}
	if r := turnOn(gw, "/v1/responses", `{"input":"hi"}`, long); r.status != http.StatusBadRequest || !strings.Contains(r.body, `"param":"X-Nodmix-Session"`) {
		t.Errorf("long header = %d %s, want 400 naming the header", r.status, r.body)
	}
	// A header's bytes that are not UTF-8 would come back from the session list as U+FFFD.
	if r := turnOn(gw, "/v1/responses", `{"input":"hi"}`, "k\xff"); r.status != http.StatusBadRequest || !strings.Contains(r.body, `"param":"X-Nodmix-Session"`) {
		t.Errorf("header not UTF-8 = %d %s, want 400 naming the header", r.status, r.body)
	}
	// A tab is a valid header value, but no more a part of a session's name.
	if r := turnOn(gw, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`, "a\tb"); r.status != http.StatusBadRequest || !strings.Contains(r.body, `"param":"X-Nodmix-Session"`) {
		t.Errorf("header with a tab = %d %s, want 400 naming the header", r.status, r.body)
	}
	rows, err := session.AllSessions(context.Background(), a.Store)
	if err != nil || len(rows) != 0 {
		t.Errorf("sessions = %v, %v; want none", rows, err)
	}
}

// TestDeleteWhileATurnRuns: a session deleted while a turn runs on it stays deleted: the turn
// fails when it would write its answer, and writes nothing.
func TestDeleteWhileATurnRuns(t *testing.T) {
	a, gw, arrived, release := heldStack(t)
	first := make(chan reply, 1)
	go func() {
		first <- turnOn(gw, "/v1/chat/completions", `{"messages":[{"role":"user","content":"first"}]}`, "s")
	}()
	<-arrived
	req, _ := http.NewRequest("DELETE", gw.URL+"/v1/sessions/s", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("delete = %d", resp.StatusCode)
	}
	close(release)
	if r := <-first; r.status != http.StatusConflict {
		t.Errorf("turn on the deleted session = %d %s, want 409", r.status, r.body)
	}
	if tr, err := a.Store.Transcript(context.Background(), "s"); err == nil {
		t.Errorf("the deleted session came back: %v", tr)
	}
}
