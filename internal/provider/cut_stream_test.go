package provider_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
)

// TestCutStreams ends each dialect's stream before its terminal event, once cleanly (the last
// chunk is whole, the terminal one never comes) and once with the connection dropped in the
// middle of a chunk. Either way the turn must end with an error that names the provider and
// says the answer is incomplete, and no EventDone may come first: the turn loop stores the
// message of EventDone, and a half answer must not be kept as if it were whole. The terminal
// events are the documented ones: Chat Completions `data: [DONE]`, Responses
// `response.completed`, Anthropic `message_stop`, Gemini a candidate's finishReason, Ollama
// `"done": true`.
func TestCutStreams(t *testing.T) {
	for _, c := range []struct {
		api, body string
	}{
		{"openai-completions", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hal\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"f\"},\"finish_reason\":\"stop\"}]}\n\n"},
		{"openai-responses", "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\nevent: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"half\"}\n\n"},
		{"anthropic-messages", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"half\"}}\n\n"},
		{"google-generative-ai", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"half\"}],\"role\":\"model\"}}]}\n\n"},
		{"ollama", "{\"message\":{\"role\":\"assistant\",\"content\":\"half\"},\"done\":false}\n"},
	} {
		for _, drop := range []bool{false, true} {
			name := c.api + " clean end"
			if drop {
				name = c.api + " dropped connection"
			}
			t.Run(name, func(t *testing.T) {
				url := server(t, func(w http.ResponseWriter, r *http.Request) {
					if !drop {
						io.WriteString(w, c.body)
						return
					}
					// Chunked headers, the body but the last few bytes, then the connection goes.
					conn, buf, err := http.NewResponseController(w).Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					defer conn.Close()
					part := c.body[:len(c.body)-5]
					fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(part), part)
					buf.Flush()
				})
				cfg := fmt.Sprintf(`{models: {providers: {p: {api: %q, baseUrl: %q, apiKey: {"$env": "P_KEY"}}}}}`, c.api, url)
				p, _, err := registry(t, cfg, map[string]string{"P_KEY": key}, nil).Resolve("p/m")
				if err != nil {
					t.Fatal(err)
				}
				rq := req()
				rq.Stream = true
				var done bool
				for ev, err := range p.Stream(context.Background(), rq, llm.Patch{}) {
					if err != nil {
						msg := err.Error()
						if !strings.HasPrefix(msg, `provider "p"`) || !strings.Contains(msg, "ended before it was complete") {
							t.Errorf("err = %s\nwant it to name provider \"p\" and say the stream ended before it was complete", msg)
						}
						if done {
							t.Error("EventDone came before the error")
						}
						return
					}
					done = done || ev.Kind == llm.EventDone
				}
				t.Error("no error")
			})
		}
	}
}
