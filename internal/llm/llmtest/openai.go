// Package llmtest is what tests of model calls share: an OpenAI server on loopback standing in
// for a paid API, and the golden-file, decode-contract, replay and benchmark checks of dialects.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Seen is what the mock read from one request, in a dialect-neutral form for scripts.
type Seen struct {
	API    string // "chat" or "responses"
	Model  string
	Stream bool
	Tools  []string // tool names offered
	// Last is the last input message: Role ("user", "tool", "assistant") and Text (a tool
	// message's text is its output). ToolName is set for tool results the mock can pair.
	Last struct {
		Role, Text, CallID string
	}
	Messages int    // how many input messages/items
	Body     []byte // the raw request body
	Header   http.Header
}

// HasTool reports whether the request offered a tool of that name.
func (s *Seen) HasTool(name string) bool {
	for _, t := range s.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// Reply is what the script answers: text, tool calls, or an HTTP error.
type Reply struct {
	Text   string
	Calls  []Call
	Status int    // non-zero: answer this HTTP status with Error as OpenAI's error object
	Error  string // error message
	// Cut ends a streamed response before its terminal event.
	Cut bool
}

// Call is one tool call the model makes.
type Call struct {
	ID, Name, Args string
}

// Server is the mock. Requests are recorded; it is safe for concurrent use.
type Server struct {
	*httptest.Server
	script func(*Seen) Reply

	mu   sync.Mutex
	seen []*Seen
}

// NewOpenAI starts the mock at <URL>/v1; close it with Close.
func NewOpenAI(script func(*Seen) Reply) *Server {
	s := &Server{script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/responses", s.responses)
	s.Server = httptest.NewServer(mux)
	return s
}

// Requests returns what the mock has seen, in order.
func (s *Server) Requests() []*Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Seen(nil), s.seen...)
}

func (s *Server) record(r *http.Request, api string) (*Seen, map[string]json.RawMessage, bool) {
	body, _ := io.ReadAll(r.Body)
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil, nil, false
	}
	seen := &Seen{API: api, Body: body, Header: r.Header.Clone()}
	_ = json.Unmarshal(top["model"], &seen.Model)
	_ = json.Unmarshal(top["stream"], &seen.Stream)
	s.mu.Lock()
	s.seen = append(s.seen, seen)
	s.mu.Unlock()
	return seen, top, true
}

func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
	w.Write(b)
}

func sse(w http.ResponseWriter, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	seen, top, ok := s.record(r, "chat")
	if !ok {
		fail(w, 400, "body is not JSON")
		return
	}
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	b, _ := json.Marshal(top)
	_ = json.Unmarshal(b, &req)
	for _, t := range req.Tools {
		seen.Tools = append(seen.Tools, t.Function.Name)
	}
	seen.Messages = len(req.Messages)
	if n := len(req.Messages); n > 0 {
		m := req.Messages[n-1]
		seen.Last.Role, seen.Last.Text, seen.Last.CallID = m.Role, contentText(m.Content), m.ToolCallID
	}
	rep := s.script(seen)
	if rep.Status != 0 {
		fail(w, rep.Status, rep.Error)
		return
	}
	const id = "chatcmpl-mock"
	finish := "stop"
	if len(rep.Calls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": len(seen.Body) / 4, "completion_tokens": len(rep.Text)/4 + 1, "total_tokens": len(seen.Body)/4 + len(rep.Text)/4 + 1}
	if !seen.Stream {
		msg := map[string]any{"role": "assistant", "content": nil}
		if rep.Text != "" {
			msg["content"] = rep.Text
		}
		if len(rep.Calls) > 0 {
			var tcs []any
			for _, c := range rep.Calls {
				tcs = append(tcs, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}})
			}
			msg["tool_calls"] = tcs
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": 1, "model": seen.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": seen.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	sse(w, chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, word := range splitWords(rep.Text) {
		sse(w, chunk(map[string]any{"content": word}, nil))
	}
	for i, c := range rep.Calls {
		// Arguments arrive in two pieces, as OpenAI streams them.
		half := len(c.Args) / 2
		sse(w, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args[:half]}}}}, nil))
		sse(w, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": c.Args[half:]}}}}, nil))
	}
	if rep.Cut {
		return
	}
	sse(w, chunk(map[string]any{}, finish))
	sse(w, map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": seen.Model, "choices": []any{}, "usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	seen, top, ok := s.record(r, "responses")
	if !ok {
		fail(w, 400, "body is not JSON")
		return
	}
	var req struct {
		Input []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			CallID  string          `json:"call_id"`
			Output  json.RawMessage `json:"output"`
		} `json:"input"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	b, _ := json.Marshal(top)
	_ = json.Unmarshal(b, &req)
	for _, t := range req.Tools {
		seen.Tools = append(seen.Tools, t.Name)
	}
	seen.Messages = len(req.Input)
	if n := len(req.Input); n > 0 {
		it := req.Input[n-1]
		switch it.Type {
		case "function_call_output":
			seen.Last.Role, seen.Last.Text, seen.Last.CallID = "tool", contentText(it.Output), it.CallID
		case "function_call":
			seen.Last.Role = "assistant"
		default:
			seen.Last.Role, seen.Last.Text = it.Role, contentText(it.Content)
		}
	}
	rep := s.script(seen)
	if rep.Status != 0 {
		fail(w, rep.Status, rep.Error)
		return
	}
	var output []any
	if rep.Text != "" {
		output = append(output, map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
	}
	for _, c := range rep.Calls {
		output = append(output, map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name, "arguments": c.Args, "status": "completed"})
	}
	usage := map[string]any{"input_tokens": len(seen.Body) / 4, "output_tokens": len(rep.Text)/4 + 1, "total_tokens": len(seen.Body)/4 + len(rep.Text)/4 + 1,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "input_tokens_details": map[string]any{"cached_tokens": 0}}
	resp := map[string]any{"id": "resp_mock", "object": "response", "created_at": 1, "status": "completed", "model": seen.Model, "output": output, "usage": usage}
	if !seen.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(fields)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	ev("response.created", map[string]any{"response": map[string]any{"id": "resp_mock", "object": "response", "status": "in_progress", "output": []any{}}})
	idx := 0
	if rep.Text != "" {
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []any{}}})
		for _, word := range splitWords(rep.Text) {
			ev("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": idx, "content_index": 0, "delta": word})
		}
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": output[0]})
		idx++
	}
	for _, c := range rep.Calls {
		item := map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name, "arguments": "", "status": "in_progress"}
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": item})
		half := len(c.Args) / 2
		ev("response.function_call_arguments.delta", map[string]any{"item_id": "fc_" + c.ID, "output_index": idx, "delta": c.Args[:half]})
		ev("response.function_call_arguments.delta", map[string]any{"item_id": "fc_" + c.ID, "output_index": idx, "delta": c.Args[half:]})
		ev("response.function_call_arguments.done", map[string]any{"item_id": "fc_" + c.ID, "output_index": idx, "arguments": c.Args})
		done := map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name, "arguments": c.Args, "status": "completed"}
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": done})
		idx++
	}
	if rep.Cut {
		return
	}
	ev("response.completed", map[string]any{"response": resp})
}

func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func splitWords(s string) []string {
	if s == "" {
		return nil
	}
	return strings.SplitAfter(s, " ")
}
