package ollama

import (
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

// TestToolLoop runs two steps against a fake Ollama: the first answer thinks and makes a call,
// the second request must carry that thinking, the call and its result back.
func TestToolLoop(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			http.NotFound(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, `{"error":"bad json"}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, body)
		step := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-ndjson")
		if step == 1 {
			fmt.Fprintln(w, `{"model":"qwen3","message":{"role":"assistant","content":"","thinking":"Need the weather."},"done":false}`)
			fmt.Fprintln(w, `{"model":"qwen3","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":false}`)
			fmt.Fprintln(w, `{"model":"qwen3","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":50,"eval_count":20}`)
			return
		}
		fmt.Fprintln(w, `{"model":"qwen3","message":{"role":"assistant","content":"Paris: 18°C."},"done":false}`)
		fmt.Fprintln(w, `{"model":"qwen3","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}`)
	}))
	defer srv.Close()

	d := New()
	req := &llm.Request{Model: "qwen3", Messages: []llm.Message{userText("Weather in Paris?")}, Tools: []llm.Tool{weatherTool}, Stream: true}
	patch := llm.Patch{Body: json.RawMessage(`{"think":"medium"}`)}
	step := func() (*llm.Message, string) {
		t.Helper()
		ev := llmtest.Step(t, d, srv.URL, "", req, patch)
		return ev.Message, ev.Finish
	}

	first, finish := step()
	if finish != "tool_calls" {
		t.Errorf("finish = %q, want tool_calls", finish)
	}
	calls := first.ToolCalls()
	if len(calls) != 1 {
		t.Fatalf("calls = %d, want 1", len(calls))
	}
	req.Messages = append(req.Messages, *first,
		llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: calls[0].CallID, Text: "18°C"}}})
	second, _ := step()
	if got := second.Text(); got != "Paris: 18°C." {
		t.Errorf("second answer = %q", got)
	}

	if bodies[1]["think"] != "medium" || bodies[1]["stream"] != true {
		t.Errorf("second request: think %v stream %v", bodies[1]["think"], bodies[1]["stream"])
	}
	want := []any{
		map[string]any{"role": "user", "content": "Weather in Paris?"},
		map[string]any{"role": "assistant", "content": "", "thinking": "Need the weather.",
			"tool_calls": []any{map[string]any{"id": "call_0", "function": map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "Paris"}}}}},
		map[string]any{"role": "tool", "content": "18°C", "tool_name": "get_weather", "tool_call_id": "call_0"},
	}
	if diff := cmp.Diff(want, bodies[1]["messages"]); diff != "" {
		t.Errorf("second request messages (-want +got):\n%s", diff)
	}
}
