package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// Signatures as Gemini 3 sends them: on the first of two parallel calls, and on the
// closing empty text part of a streamed answer.
const (
	loopCallSig = "CiQBcsjafHBqCqiN6Fa0cR2nQvVdmP+z0Q/a6Ue8K6Q0bWDhV0YKZQFyyNp8PQ2n5jKfq0A=="
	loopTextSig = "CiIBcsjafEnd+/Sig=="
)

// TestToolLoopKeepsSignatures runs two steps against a fake Gemini: the first answer makes two
// calls, the second request must carry the model turn back with its signatures exactly.
func TestToolLoopKeepsSignatures(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, body)
		paths = append(paths, r.URL.RequestURI())
		step := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		switch step {
		case 1:
			fmt.Fprintf(w, "data: %s\n\n", `{"candidates":[{"content":{"role":"model","parts":[{"text":"Two lookups.","thought":true}]},"index":0}]}`)
			fmt.Fprintf(w, "data: %s\n\n", `{"candidates":[{"content":{"role":"model","parts":[`+
				`{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"`+loopCallSig+`"},`+
				`{"functionCall":{"name":"get_weather","args":{"city":"Berlin"}}}]},"finishReason":"STOP","index":0}]}`)
		default:
			fmt.Fprintf(w, "data: %s\n\n", `{"candidates":[{"content":{"role":"model","parts":[{"text":"Paris 18°C, Berlin unknown."}]},"index":0}]}`)
			fmt.Fprintf(w, "data: %s\n\n", `{"candidates":[{"content":{"role":"model","parts":[{"text":"","thoughtSignature":"`+loopTextSig+`"}]},"finishReason":"STOP","index":0}]}`)
		}
	}))
	defer srv.Close()

	d := New()
	req := &llm.Request{Model: "gemini-3-pro-preview", Messages: []llm.Message{userText("Weather in Paris and Berlin?")},
		Tools: []llm.Tool{weatherTool}, Stream: true}

	step := func() *llm.Message {
		t.Helper()
		return llmtest.Step(t, d, srv.URL, "/v1beta", req, llm.Patch{}).Message
	}

	first := step()
	calls := first.ToolCalls()
	if len(calls) != 2 {
		t.Fatalf("calls = %d, want 2", len(calls))
	}
	// The session store keeps the message as JSON; the signature must survive it.
	req.Messages = append(req.Messages, llmtest.Reload(t, first),
		llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: calls[0].CallID, Text: "18°C"}}},
		llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: calls[1].CallID, Text: "no data", IsError: true}}},
	)
	second := step()
	if got := second.Text(); got != "Paris 18°C, Berlin unknown." {
		t.Errorf("second answer = %q", got)
	}

	if want := "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"; paths[1] != want {
		t.Errorf("path = %q, want %q", paths[1], want)
	}
	contents := bodies[1]["contents"].([]any)
	if len(contents) != 3 {
		t.Fatalf("second request has %d contents, want user, model, user", len(contents))
	}
	wantModel := map[string]any{"role": "model", "parts": []any{
		map[string]any{"functionCall": map[string]any{"name": "get_weather", "args": map[string]any{"city": "Paris"}}, "thoughtSignature": loopCallSig},
		map[string]any{"functionCall": map[string]any{"name": "get_weather", "args": map[string]any{"city": "Berlin"}}},
	}}
	if diff := cmp.Diff(wantModel, contents[1]); diff != "" {
		t.Errorf("model turn sent back (-want +got):\n%s", diff)
	}
	wantResults := map[string]any{"role": "user", "parts": []any{
		map[string]any{"functionResponse": map[string]any{"name": "get_weather", "response": map[string]any{"result": "18°C"}}},
		map[string]any{"functionResponse": map[string]any{"name": "get_weather", "response": map[string]any{"error": "no data"}}},
	}}
	if diff := cmp.Diff(wantResults, contents[2]); diff != "" {
		t.Errorf("tool results turn (-want +got):\n%s", diff)
	}

	// The final text's signature, on its empty part, is kept for the step after.
	req.Messages = append(req.Messages, *second, userText("Thanks"))
	enc, err := d.Encode(req, llm.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(enc.Body, []byte(`{"text":"","thoughtSignature":"`+loopTextSig+`"}`)) {
		t.Errorf("third request lost the text signature: %s", enc.Body)
	}
}
