package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/gateway"
	"github.com/nodmix/nodmix/internal/leaktest"
)

// TestClientDisconnectCancelsTheTurn: when the client goes away, the provider request is
// cancelled and the turn ends, keeping what was said.
func TestClientDisconnectCancelsTheTurn(t *testing.T) {
	leaktest.Check(t)
	cancelled := make(chan struct{})
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // a model that never answers
		close(cancelled)
	}))
	defer provider.Close()
	a := persistentApp(t, fmt.Sprintf(`{models: {providers: {slow: {baseUrl: %q, models: [{id: "m"}]}}}, tools: {deny: ["*"]}}`, provider.URL+"/v1"))
	gw := httptest.NewServer(gateway.WithAPI(http.NotFoundHandler(), &gateway.API{Agent: a}))
	defer gw.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", gw.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"slow/m","stream":true,"messages":[{"role":"user","content":"hello?"}]}`))
	req.Header.Set("X-Nodmix-Session", "gone")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_, _ = resp.Body.Read(make([]byte, 1<<16))
		for {
			if _, err := resp.Body.Read(make([]byte, 1<<16)); err != nil {
				break
			}
		}
		resp.Body.Close()
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider request was not cancelled when the client went away")
	}
	tr, err := a.Store.Transcript(context.Background(), "gone")
	if err != nil || len(tr) != 1 {
		t.Errorf("transcript = %v, %v; want the user's message kept", tr, err)
	}
	http.DefaultClient.CloseIdleConnections()
}
