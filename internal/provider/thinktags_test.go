package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/provider"
)

// miniMaxChunk is one chunk of MiniMax's OpenAI-compatible stream as
// https://platform.minimax.io/docs/api-reference/text-openai-api documents it ("the data format
// matches OpenAI's"), with the extra members MiniMax adds to a delta (name, audio_content).
func miniMaxChunk(delta, finish string) string {
	d, _ := json.Marshal(map[string]string{"content": delta, "role": "assistant", "name": "MiniMax AI", "audio_content": ""})
	f := "null"
	if finish != "" {
		f = fmt.Sprintf("%q", finish)
	}
	return fmt.Sprintf("data: {\"id\":\"05b8\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}],\"created\":1762000000,\"model\":\"MiniMax-M2.7\",\"object\":\"chat.completion.chunk\"}\n\n", d, f)
}

// miniMaxAt serves h as if it were host, so that a base URL naming MiniMax's API reaches it;
// the provider's key is key.
func miniMaxAt(t *testing.T, baseURL string, h http.HandlerFunc) *provider.Provider {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	t.Cleanup(tr.CloseIdleConnections)
	cfg, err := config.Parse([]byte(fmt.Sprintf(`{models: {providers: {mm: {api: "openai-completions", baseUrl: %q, apiKey: {"$env": "MM_KEY"}}}}}`, baseURL)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := provider.New(cfg, provider.Options{
		HTTP:      &http.Client{Transport: tr},
		LookupEnv: func(k string) (string, bool) { return key, k == "MM_KEY" },
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := r.Resolve("mm/MiniMax-M2.7")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMiniMaxThinkTags calls MiniMax's OpenAI-compatible API through a custom
// openai-completions entry. Without reasoning_split MiniMax documents that "the content field
// will contain <think> tag content, which must be preserved completely" when the assistant
// message goes back in a tool loop. So the answer's <think> block becomes a reasoning part (and
// reasoning deltas, however the tags fall across chunks), its text is what follows without the
// blank lines MiniMax puts after </think> (in a later chunk than the tag or not), and the next
// request sends the content back byte for byte. Another host's answer is left as it came.
func TestMiniMaxThinkTags(t *testing.T) {
	const content = "<think>\nThe user greets me.\n</think>\n\nHello!"
	// The closing tag is cut across chunks, and so is the opening one; the newlines after the
	// closing tag come in chunks of their own.
	pieces := []string{"<thi", "nk>\nThe user greets me.\n</th", "ink>", "\n", "\nHel", "lo!"}
	whole := fmt.Sprintf(`{"id":"05b8","choices":[{"finish_reason":"stop","index":0,"message":{"content":%q,"role":"assistant","name":"MiniMax AI","audio_content":""}}],"created":1762000000,"model":"MiniMax-M2.7","object":"chat.completion","usage":{"total_tokens":30,"prompt_tokens":10,"completion_tokens":20}}`, content)
	type got struct {
		Reasoning, Text string // the deltas, concatenated
		Parts           []llm.Part
		Sent            string // the assistant content of the next request
	}
	split := got{
		Reasoning: "\nThe user greets me.\n", Text: "Hello!",
		Parts: []llm.Part{
			{Kind: llm.KindReasoning, Text: "\nThe user greets me.\n", Raw: mustJSON(content), Dialect: "openai-completions+think-tags"},
			{Kind: llm.KindText, Text: "Hello!"},
		},
		Sent: content,
	}
	for _, c := range []struct {
		name    string
		baseURL string
		stream  bool
		tool    bool // the answer ends in a tool call
		want    got
	}{
		{"minimax stream", "http://api.minimax.io/v1", true, false, split},
		{"minimax document", "http://api.minimax.io/v1", false, false, got{Parts: split.Parts, Sent: content}}, // a document has no deltas
		{"minimax china stream", "http://API.MINIMAXI.COM/v1", true, false, split},
		{"minimax tool call", "http://api.minimax.io/v1", true, true, got{
			Reasoning: split.Reasoning, Text: split.Text,
			Parts: append(split.Parts[:2:2], llm.Part{Kind: llm.KindToolCall, CallID: "call_function_1", Name: "clock", Args: json.RawMessage(`{}`)}),
			Sent:  content,
		}},
		{"another host", "http://llm.internal.example/v1", true, false, got{Text: content, Parts: []llm.Part{{Kind: llm.KindText, Text: content}}, Sent: content}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sent []string
			p := miniMaxAt(t, c.baseURL, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				var body struct {
					Messages []struct {
						Role    string `json:"role"`
						Content string `json:"content"`
					} `json:"messages"`
				}
				if err := json.Unmarshal(b, &body); err != nil {
					t.Errorf("request: %v", err)
				}
				for _, m := range body.Messages {
					if m.Role == "assistant" {
						sent = append(sent, m.Content)
					}
				}
				if !c.stream {
					io.WriteString(w, whole)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				for _, s := range pieces {
					io.WriteString(w, miniMaxChunk(s, ""))
				}
				if c.tool && len(sent) == 0 {
					io.WriteString(w, "data: {\"id\":\"05b8\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_function_1\",\"type\":\"function\",\"function\":{\"name\":\"clock\",\"arguments\":\"{}\"}}],\"role\":\"assistant\"},\"finish_reason\":null}],\"object\":\"chat.completion.chunk\"}\n\n")
					io.WriteString(w, miniMaxChunk("", "tool_calls"))
				} else {
					io.WriteString(w, miniMaxChunk("", "stop"))
				}
				io.WriteString(w, "data: [DONE]\n\n")
			})
			rq := &llm.Request{Model: "MiniMax-M2.7", Stream: c.stream, Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hi"}}}}}
			var g got
			var msg *llm.Message
			for ev, err := range p.Stream(context.Background(), rq, llm.Patch{}) {
				if err != nil {
					t.Fatal(err)
				}
				switch ev.Kind {
				case llm.EventReasoning:
					g.Reasoning += ev.Text
				case llm.EventText:
					g.Text += ev.Text
				case llm.EventDone:
					msg = ev.Message
				}
			}
			if msg == nil {
				t.Fatal("no done event")
			}
			g.Parts = msg.Parts
			rq.Messages = append(rq.Messages, *msg, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "again"}}})
			for range p.Stream(context.Background(), rq, llm.Patch{}) {
			}
			if len(sent) == 1 {
				g.Sent = sent[0]
			}
			if diff := cmp.Diff(c.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// TestMiniMaxReasoningDetails: with reasoning_split on (set through the request patch), MiniMax
// answers with the reasoning in message.reasoning_details, an array of {"type":
// "reasoning.text", "text": …} objects as OpenRouter sends, and content without <think> tags.
// An entry at MiniMax's hosts reads it as a reasoning part, its deltas as reasoning, and sends
// the array back unchanged on the tool-call turn (a stream's pieces merged by index into the
// array a whole answer holds). An entry at another host reads no reasoning_details.
func TestMiniMaxReasoningDetails(t *testing.T) {
	const detailsWhole = `[{"type":"reasoning.text","id":"reasoning-text-1","format":"MiniMax-response-v1","index":0,"text":"The user wants the time."}]`
	wholeBody := `{"id":"05b9","choices":[{"finish_reason":"tool_calls","index":0,"message":{"content":"Checking.","role":"assistant","name":"MiniMax AI","audio_content":"","tool_calls":[{"id":"call_function_1","type":"function","function":{"name":"clock","arguments":"{}"}}],"reasoning_details":` + detailsWhole + `}}],"created":1762000000,"model":"MiniMax-M2.7","object":"chat.completion","usage":{"total_tokens":30,"prompt_tokens":10,"completion_tokens":20},"base_resp":{"status_code":0,"status_msg":""}}`
	chunk := func(delta string) string {
		return `data: {"id":"05b9","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}],"created":1762000000,"model":"MiniMax-M2.7","object":"chat.completion.chunk"}` + "\n\n"
	}
	streamBody := chunk(`{"role":"assistant","reasoning_details":[{"type":"reasoning.text","id":"reasoning-text-1","format":"MiniMax-response-v1","index":0,"text":"The user wants"}]}`) +
		chunk(`{"reasoning_details":[{"type":"reasoning.text","id":"reasoning-text-1","format":"MiniMax-response-v1","index":0,"text":" the time."}]}`) +
		chunk(`{"content":"Checking."}`) +
		chunk(`{"tool_calls":[{"index":0,"id":"call_function_1","type":"function","function":{"name":"clock","arguments":"{}"}}]}`) +
		miniMaxChunk("", "tool_calls") + "data: [DONE]\n\n"
	// The form MiniMax's streaming example reads: each piece holds the whole text so far.
	cumulativeBody := strings.Replace(streamBody, `"index":0,"text":" the time."`, `"index":0,"text":"The user wants the time."`, 1)
	type got struct {
		Reasoning string // the reasoning deltas, concatenated
		Parts     []llm.Part
		Split     bool            // the first request asked for reasoning_split
		Sent      json.RawMessage // the assistant message's reasoning_details in the next request
	}
	call := llm.Part{Kind: llm.KindToolCall, CallID: "call_function_1", Name: "clock", Args: json.RawMessage(`{}`)}
	streamDetails := `[{"type":"reasoning.text","id":"reasoning-text-1","format":"MiniMax-response-v1","index":0,"text":"The user wants the time."}]`
	for _, c := range []struct {
		name    string
		baseURL string
		stream  bool
		want    got
	}{
		{"stream", "http://api.minimax.io/v1", true, got{
			Reasoning: "The user wants the time.",
			Parts: []llm.Part{
				{Kind: llm.KindReasoning, Text: "The user wants the time.", Raw: json.RawMessage(streamDetails), Dialect: "openai-completions"},
				{Kind: llm.KindText, Text: "Checking."}, call,
			},
			Split: true, Sent: json.RawMessage(streamDetails),
		}},
		{"stream, each piece the whole text so far", "http://api.minimax.io/v1", true, got{
			Reasoning: "The user wants the time.",
			Parts: []llm.Part{
				{Kind: llm.KindReasoning, Text: "The user wants the time.", Raw: json.RawMessage(streamDetails), Dialect: "openai-completions"},
				{Kind: llm.KindText, Text: "Checking."}, call,
			},
			Split: true, Sent: json.RawMessage(streamDetails),
		}},
		{"document", "http://api.minimaxi.com/v1", false, got{
			Parts: []llm.Part{
				{Kind: llm.KindReasoning, Text: "The user wants the time.", Raw: json.RawMessage(detailsWhole), Dialect: "openai-completions"},
				{Kind: llm.KindText, Text: "Checking."}, call,
			},
			Split: true, Sent: json.RawMessage(detailsWhole),
		}},
		{"another host", "http://llm.internal.example/v1", false, got{
			Parts: []llm.Part{{Kind: llm.KindText, Text: "Checking."}, call},
			Split: true,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var g got
			n := 0
			p := miniMaxAt(t, c.baseURL, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				var body struct {
					ReasoningSplit bool `json:"reasoning_split"`
					Messages       []struct {
						Role             string          `json:"role"`
						ReasoningDetails json.RawMessage `json:"reasoning_details"`
					} `json:"messages"`
				}
				if err := json.Unmarshal(b, &body); err != nil {
					t.Errorf("request: %v", err)
				}
				if n++; n == 1 {
					g.Split = body.ReasoningSplit
				}
				for _, m := range body.Messages {
					if m.Role == "assistant" {
						g.Sent = m.ReasoningDetails
					}
				}
				if c.stream {
					w.Header().Set("Content-Type", "text/event-stream")
					if strings.Contains(c.name, "whole text so far") {
						io.WriteString(w, cumulativeBody)
					} else {
						io.WriteString(w, streamBody)
					}
					return
				}
				io.WriteString(w, wholeBody)
			})
			patch := llm.Patch{Body: json.RawMessage(`{"reasoning_split":true}`)}
			rq := &llm.Request{Model: "MiniMax-M2.7", Stream: c.stream,
				Tools:    []llm.Tool{{Name: "clock", Parameters: json.RawMessage(`{"type":"object"}`)}},
				Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "time?"}}}}}
			var msg *llm.Message
			for ev, err := range p.Stream(context.Background(), rq, patch) {
				if err != nil {
					t.Fatal(err)
				}
				switch ev.Kind {
				case llm.EventReasoning:
					g.Reasoning += ev.Text
				case llm.EventDone:
					msg = ev.Message
				}
			}
			if msg == nil {
				t.Fatal("no done event")
			}
			g.Parts = msg.Parts
			rq.Messages = append(rq.Messages, *msg, llm.Message{Role: llm.RoleTool, Parts: []llm.Part{{Kind: llm.KindToolResult, CallID: "call_function_1", Text: "12:00"}}})
			for _, err := range p.Stream(context.Background(), rq, patch) {
				if err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(c.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
