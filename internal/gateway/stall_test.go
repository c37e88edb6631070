package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/gateway"
)

// TestStalledStreamCancelsTheTurn: a client that stops reading a streamed answer, its
// connection still open, is cut by the write deadline, and the turn ends with it: the model's
// stream is not read on for nobody, and nothing half-written is stored.
func TestStalledStreamCancelsTheTurn(t *testing.T) {
	for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
		t.Run(path, func(t *testing.T) {
			cancelled := make(chan struct{})
			word := strings.Repeat("x", 32<<10)
			provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				// An answer that goes on for as long as it is read.
				for i := 0; ; i++ {
					_, err := fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}]}`+"\n\n", word)
					w.(http.Flusher).Flush()
					if err != nil || r.Context().Err() != nil {
						close(cancelled)
						return
					}
				}
			}))
			defer provider.Close()
			a := persistentApp(t, mockProvider(provider.URL))
			addr := serveOn(t, "", gateway.WithAPI(http.NotFoundHandler(), &gateway.API{Agent: a}), gateway.Limits{Write: 300 * time.Millisecond})
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			body := `{"stream":true,"messages":[{"role":"user","content":"go on"}]}`
			if path == "/v1/responses" {
				body = `{"stream":true,"input":"go on"}`
			}
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nX-Nodmix-Session: s\r\nContent-Length: %d\r\n\r\n%s", path, addr, len(body), body)
			// The client reads nothing from here on, and keeps its connection open.
			select {
			case <-cancelled:
			case <-time.After(20 * time.Second):
				t.Fatal("the model's stream is still read for a client that stopped reading")
			}
			// The turn ends: the session takes another one, and holds the question alone.
			deadline := time.Now().Add(10 * time.Second)
			for {
				tr, err := a.Store.Transcript(context.Background(), "s")
				if err == nil && len(tr) == 1 && tr[0].Text() == "go on" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("transcript = %v, %v; want the question alone", tr, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
