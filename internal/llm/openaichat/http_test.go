package openaichat

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
	stream, err := os.ReadFile("testdata/stream/deepseek_reasoning.sse")
	if err != nil {
		t.Fatal(err)
	}
	q := Quirks{MaxTokensField: "max_tokens", ReasoningContent: true}
	req := llm.Request{Model: "deepseek-v4-pro", Stream: true, Tools: tools(), Messages: reasoningTranscript()}
	patch := llm.Patch{Body: []byte(`{"thinking":{"type":"enabled"},"reasoning_effort":"max"}`)}
	enc, err := New(q).Encode(&req, patch)
	if err != nil {
		t.Fatal(err)
	}
	if enc.Path != "/chat/completions" || enc.Header.Get("Content-Type") != "application/json" || enc.Header.Get("Accept") != "text/event-stream" {
		t.Fatalf("request %s with headers %v", enc.Path, enc.Header)
	}
	resp := llmtest.Replay(t, enc, "/v1", "text/event-stream", stream)
	evs, err := llmtest.Collect(t, New(q).Decode(resp.Body, true))
	want, _ := os.ReadFile("testdata/stream/deepseek_reasoning.events")
	if diff := cmp.Diff(string(want), llmtest.Render(evs, err)); diff != "" {
		t.Errorf("events over HTTP (-recorded +got):\n%s", diff)
	}
}
