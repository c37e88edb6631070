package openairesp

import (
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
	if enc.Path != "/responses" || enc.Header.Get("Content-Type") != "application/json" || enc.Header.Get("Accept") != "text/event-stream" {
		t.Fatalf("request %s with headers %v", enc.Path, enc.Header)
	}
	resp := llmtest.Replay(t, enc, "/v1", "text/event-stream", stream)
	evs, err := llmtest.Collect(t, New().Decode(resp.Body, true))
	want, _ := os.ReadFile("testdata/stream/reasoning_tool.events")
	if diff := cmp.Diff(string(want), llmtest.Render(evs, err)); diff != "" {
		t.Errorf("events over HTTP (-recorded +got):\n%s", diff)
	}
}
