package openairesp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// TestExchangeHTTP sends an encoded request to a server that answers with a recorded stream,
// flushed in pieces, and decodes the response body as it arrives.
func TestExchangeHTTP(t *testing.T) {
	stream, err := os.ReadFile("testdata/stream/reasoning_tool.sse")
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: "gpt-5.5", Stream: true, Tools: tools(), Messages: reasoningTranscript()}
	patch := llm.Patch{Body: []byte(`{"reasoning":{"effort":"high","summary":"auto"},"include":["reasoning.encrypted_content"],"store":false}`)}
	enc, err := New().Encode(&req, patch)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" ||
			r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "text/event-stream" {
			http.Error(w, "bad request line or headers", http.StatusBadRequest)
			return
		}
		if !bytes.Equal(body, enc.Body) {
			http.Error(w, "body changed in transit", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for len(stream) > 0 {
			n := min(len(stream), 97) // pieces that cut lines and events
			_, _ = w.Write(stream[:n])
			w.(http.Flusher).Flush()
			stream = stream[n:]
		}
	}))
	defer srv.Close()

	hr, err := http.NewRequest(http.MethodPost, srv.URL+"/v1"+enc.Path, bytes.NewReader(enc.Body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header = enc.Header.Clone()
	resp, err := srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	evs, err := llmtest.Collect(t, New().Decode(resp.Body, true))
	want, _ := os.ReadFile("testdata/stream/reasoning_tool.events")
	if diff := cmp.Diff(string(want), llmtest.Render(evs, err)); diff != "" {
		t.Errorf("events over HTTP (-recorded +got):\n%s", diff)
	}
}
