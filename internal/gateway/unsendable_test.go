package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/session"
)

// TestImageTheProviderCannotTakeIsRefused: an image the model's wire format cannot carry (here
// an ftp URL to an Anthropic Messages provider, which takes data and https URLs only) is answered
// 400 invalid_input before anything is sent or stored, so the session is not left with a message
// every later turn would fail on; the next turn on it runs.
func TestImageTheProviderCannotTakeIsRefused(t *testing.T) {
	var calls atomic.Int32
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"c","content":[{"type":"text","text":"fine"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`)
	}))
	defer provider.Close()
	a := persistentApp(t, fmt.Sprintf(`{models: {providers: {claude: {baseUrl: %q, api: "anthropic-messages", apiKey: "sk-test", models: [{id: "c"}]}}}, agents: {defaults: {model: "claude/c"}}, tools: {deny: ["*"]}}`, provider.URL+"/v1"))
	gw := httptest.NewServer(gateway.WithAPI(http.NotFoundHandler(), &gateway.API{Agent: a}))
	defer gw.Close()

	image := `{"messages": [{"role": "user", "content": [{"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": {"url": "ftp://example.com/x.png"}}]}]}`
	got := turnOn(gw, "/v1/chat/completions", image, "img")
	if got.status != http.StatusBadRequest || !strings.Contains(got.body, `"code":"invalid_input"`) || !strings.Contains(got.body, "https URL") {
		t.Fatalf("an ftp image: %d %s, want 400 invalid_input naming what the provider takes", got.status, got.body)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the provider was called %d times for a request it cannot take", n)
	}
	if _, err := a.Store.Transcript(context.Background(), "img"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the refused turn left a session behind (%v)", err)
	}
	if got := turnOn(gw, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "and now?"}]}`, "img"); got.status != http.StatusOK {
		t.Fatalf("the next turn: %d %s", got.status, got.body)
	}
	if diff := cmp.Diff([]string{"user: and now?", "assistant: fine"}, transcriptText(t, a, "img")); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}
