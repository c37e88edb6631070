package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// thinking and signature of the first step's stream, with characters an encoder might escape.
const (
	loopThinking  = "Weather \"first\" <then> time & \u00e9t\u00e9.\nLine two."
	loopSignature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgx+/=="
)

// loopStream is step 1 as streamed: thinking in two pieces, its signature, one tool call.
func loopStream() string {
	half := len(loopThinking) / 2
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":20,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_start\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":` + q(loopThinking[:half]) + `}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":` + q(loopThinking[half:]) + `}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":` + q(loopSignature) + `}}` + "\n\n" +
		"event: content_block_start\n" +
		`data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Paris\"}"}}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}` + "\n\n" +
		"event: message_stop\n" +
		`data: {"type":"message_stop"}` + "\n\n"
}

const loopFinal = "event: message_start\n" +
	`data: {"type":"message_start","message":{"usage":{"input_tokens":60,"output_tokens":1}}}` + "\n\n" +
	`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"18°C in Paris."}}` + "\n\n" +
	`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":8}}` + "\n\n" +
	`data: {"type":"message_stop"}` + "\n\n"

// sentBlocks is the content of the assistant message in a request body, block by block.
func sentBlocks(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request body: %v", err)
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			return m.Content
		}
	}
	t.Fatalf("no assistant message in %s", body)
	return nil
}

// loopServer answers step 1 with first and step 2 with second, keeping the request bodies.
type loopServer struct {
	t             *testing.T
	first, second string
	stream        bool

	mu     sync.Mutex
	bodies [][]byte
}

func (s *loopServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	n := len(s.bodies)
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		s.t.Errorf("request %s %s, want POST /v1/messages", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("anthropic-version"); got != APIVersion {
		s.t.Errorf("anthropic-version = %q", got)
	}
	if got := r.Header.Get("content-type"); got != "application/json" {
		s.t.Errorf("content-type = %q", got)
	}
	if s.stream {
		if got := r.Header.Get("accept"); got != "text/event-stream" {
			s.t.Errorf("accept = %q", got)
		}
		w.Header().Set("Content-Type", "text/event-stream")
	}
	if n == 1 {
		io.WriteString(w, s.first)
	} else {
		io.WriteString(w, s.second)
	}
}

// step sends one request as the provider layer would and decodes the answer.
func step(t *testing.T, d llm.Dialect, url string, req *llm.Request) *llm.Event {
	t.Helper()
	ev := llmtest.Step(t, d, url, "/v1", req, llm.Patch{})
	return &ev
}

// runLoop runs two steps: the model calls a tool, nodmix answers with its result.
func runLoop(t *testing.T, srv *loopServer) (first *llm.Event) {
	ts := httptest.NewServer(srv)
	defer ts.Close()
	d := New(Options{})
	req := &llm.Request{
		Model:    "claude-opus-4-7",
		Messages: []llm.Message{userText("Weather in Paris?")},
		Tools:    weatherTools[:1],
		Stream:   srv.stream,
	}
	first = step(t, d, ts.URL, req)
	if first.Finish != "tool_calls" {
		t.Fatalf("step 1 finish = %q", first.Finish)
	}
	next := *req
	next.Messages = append(append([]llm.Message(nil), req.Messages...), *first.Message)
	for _, c := range first.Message.ToolCalls() {
		next.Messages = append(next.Messages, toolResult(c.CallID, "18°C", false))
	}
	final := step(t, d, ts.URL, &next)
	if final.Message.Text() == "" {
		t.Fatalf("step 2 answer: %+v", final.Message)
	}
	if len(srv.bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(srv.bodies))
	}
	return first
}

func TestToolLoopStream(t *testing.T) {
	srv := &loopServer{t: t, first: loopStream(), second: loopFinal, stream: true}
	first := runLoop(t, srv)

	sent := sentBlocks(t, srv.bodies[1])
	if len(sent) != 2 {
		t.Fatalf("assistant blocks sent: %s", sent)
	}
	// The stored block goes back byte for byte...
	if diff := cmp.Diff(string(first.Message.Parts[0].Raw), string(sent[0])); diff != "" {
		t.Errorf("thinking block sent back (-stored +sent):\n%s", diff)
	}
	// ...and holds exactly what the stream said, signature included.
	var blk thinkingBlock
	if err := json.Unmarshal(sent[0], &blk); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(thinkingBlock{Type: "thinking", Thinking: loopThinking, Signature: loopSignature}, blk); diff != "" {
		t.Errorf("thinking block (-want +got):\n%s", diff)
	}
	if want := `{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}`; string(sent[1]) != want {
		t.Errorf("tool_use sent back = %s, want %s", sent[1], want)
	}
}

func TestToolLoopDocument(t *testing.T) {
	resp, err := os.ReadFile(filepath.Join("testdata", "response.json"))
	if err != nil {
		t.Fatal(err)
	}
	final := `{"type":"message","role":"assistant","content":[{"type":"text","text":"Both mild."}],"stop_reason":"end_turn","usage":{"input_tokens":700,"output_tokens":5}}`
	srv := &loopServer{t: t, first: string(resp), second: final}
	runLoop(t, srv)

	// The blocks the server sent, compacted, are the blocks it gets back.
	var doc struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(resp, &doc); err != nil {
		t.Fatal(err)
	}
	sent := sentBlocks(t, srv.bodies[1])
	if len(sent) != len(doc.Content) {
		t.Fatalf("sent %d blocks, the response had %d", len(sent), len(doc.Content))
	}
	for i := range 2 { // thinking and redacted_thinking
		var c bytes.Buffer
		if err := json.Compact(&c, doc.Content[i]); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.String(), string(sent[i])); diff != "" {
			t.Errorf("block %d sent back (-received +sent):\n%s", i, diff)
		}
	}
}
