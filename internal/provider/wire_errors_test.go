package provider_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/provider"
)

// TestDocumentedErrorBodies sends each provider's documented error bodies, as an HTTP error and
// inside a 200 stream, and checks that the turn's error names the provider and carries the
// provider's message, never the key.
//
//   - Anthropic, https://docs.anthropic.com/en/api/errors and .../messages-streaming ("Error
//     events": `event: error` with overloaded_error mid-stream).
//   - OpenAI Chat Completions, https://platform.openai.com/docs/guides/error-codes; Responses,
//     https://platform.openai.com/docs/api-reference/responses-streaming (response.failed, error).
//   - Gemini, https://ai.google.dev/gemini-api/docs/troubleshooting ({"error": {code, message,
//     status}}, also as a chunk of an ?alt=sse stream).
//   - Ollama, https://github.com/ollama/ollama/blob/main/docs/api.md#errors ({"error": "…"},
//     also as an NDJSON line mid-stream).
//   - Z.AI, https://docs.z.ai/api-reference/api-code: an HTTP status with Z.AI's business code
//     and message in the body (1214 "Invalid ${field} parameter…").
//   - MiniMax's Anthropic-compatible API answers in Anthropic's error shape; its codes,
//     https://platform.minimax.io/docs/api-reference/errorcode, end the message ("(2013)").
func TestDocumentedErrorBodies(t *testing.T) {
	for _, c := range []struct {
		name, api string
		status    int
		body      string
		want      string
	}{
		{"anthropic http", "anthropic-messages", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded"},
		{"anthropic stream", "anthropic-messages", 200, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", "provider error (overloaded_error): Overloaded"},
		{"chat http", "openai-completions", 400, `{"error":{"message":"Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model.","type":"invalid_request_error","param":"reasoning_effort","code":"unsupported_value"}}`, "Unsupported value: 'minimal'"},
		{"chat stream", "openai-completions", 200, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n", "provider error (server_error): The server had an error"},
		{"responses failed", "openai-responses", 200, "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The model failed to generate a response.\"},\"output\":[]}}\n\n", "provider error (server_error): The model failed to generate a response."},
		{"responses error event", "openai-responses", 200, "event: error\ndata: {\"type\":\"error\",\"code\":\"ERR_SOMETHING\",\"message\":\"Something went wrong\",\"param\":null,\"sequence_number\":1}\n\n", "provider error (ERR_SOMETHING): Something went wrong"},
		{"gemini http", "google-generative-ai", 400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`, "API key not valid"},
		{"gemini stream", "google-generative-ai", 200, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}],\"role\":\"model\"}}]}\n\ndata: {\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again later.\",\"status\":\"UNAVAILABLE\"}}\n\n", "The model is overloaded"},
		{"zai http", "openai-completions", 400, `{"error":{"code":"1214","message":"Invalid messages parameter. Please check the documentation"}}`, "Invalid messages parameter"},
		{"minimax http", "anthropic-messages", 400, `{"type":"error","error":{"type":"bad_request_error","message":"invalid params, invalid function arguments json string, tool_call_id: call_function_1 (2013)","http_code":"400"}}`, "invalid function arguments json string"},
		{"ollama http", "ollama", 400, `{"error":"\"m\" does not support thinking"}`, `"m" does not support thinking`},
		{"ollama stream", "ollama", 200, "{\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}\n{\"error\":\"an error was encountered while running the model\"}\n", "an error was encountered while running the model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := server(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			})
			cfg := fmt.Sprintf(`{models: {providers: {p: {api: %q, baseUrl: %q, apiKey: {"$env": "P_KEY"}}}}}`, c.api, url)
			r := registry(t, cfg, map[string]string{"P_KEY": key}, nil)
			p, _, err := r.Resolve("p/m")
			if err != nil {
				t.Fatal(err)
			}
			rq := req()
			rq.Stream = true
			_, err = collect(p, rq)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, `provider "p"`) || !strings.Contains(msg, c.want) {
				t.Errorf("err = %s\nwant it to name provider \"p\" and contain %q", msg, c.want)
			}
			if strings.Contains(msg, key) {
				t.Errorf("the key leaked: %s", msg)
			}
		})
	}
}

// TestMiniMaxStatusIn200: MiniMax's OpenAI-compatible API reports some failures with HTTP 200
// and its own envelope, {"base_resp":{"status_code":N,"status_msg":"…"}} and no choices, as a
// whole body or as a stream event (codes: https://platform.minimax.io/docs/api-reference/errorcode,
// 1004 authentication, 1008 balance, 1027 output content). The turn's error names the provider,
// the status code and its message, never "no choices" and never the key, even when the message
// echoes it; at MiniMax's hosts (the think-tag wrapper) and at any other.
func TestMiniMaxStatusIn200(t *testing.T) {
	const envelope = `"created":0,"model":"","object":"","usage":null,"input_sensitive":false,"output_sensitive":false,"input_sensitive_type":0,"output_sensitive_type":0`
	status := func(code int, msg string) string {
		m, _ := json.Marshal(msg)
		return fmt.Sprintf(`{"id":"","choices":null,%s,"base_resp":{"status_code":%d,"status_msg":%s}}`, envelope, code, m)
	}
	login := "login fail: Please carry the API secret key in the 'Authorization' field of the request header"
	for _, c := range []struct {
		name   string
		stream bool
		body   string
		want   string
	}{
		{"document", false, status(1004, login), "provider error (status_code 1004): " + login + " — check the API key: "},
		{"document echoing the key", false, status(1004, "invalid api key "+key), "provider error (status_code 1004): invalid api key ******** — check the API key"},
		{"stream event", true, miniMaxChunk("Hel", "") + "data: " + status(1027, "output new_sensitive") + "\n\ndata: [DONE]\n\n", "provider error (status_code 1027): output new_sensitive — the provider refused the request"},
		{"stream, first event", true, "data: " + status(1008, "insufficient balance") + "\n\n", "provider error (status_code 1008): insufficient balance — the account is out of credit"},
		{"undocumented code, no hint", false, status(4321, "odd"), "provider error (status_code 4321): odd"},
	} {
		h := func(w http.ResponseWriter, r *http.Request) {
			if c.stream {
				w.Header().Set("Content-Type", "text/event-stream")
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			io.WriteString(w, c.body)
		}
		t.Run(c.name+", another host", func(t *testing.T) {
			cfg := fmt.Sprintf(`{models: {providers: {p: {api: "openai-completions", baseUrl: %q, apiKey: {"$env": "P_KEY"}}}}}`, server(t, h))
			p, _, err := registry(t, cfg, map[string]string{"P_KEY": key}, nil).Resolve("p/MiniMax-M2.7")
			if err != nil {
				t.Fatal(err)
			}
			rq := req()
			rq.Stream = c.stream
			_, err = collect(p, rq)
			checkStatusError(t, err, `provider "p"`, c.want)
			if strings.Contains(c.name, "no hint") && strings.Contains(err.Error(), " — ") {
				t.Errorf("err = %s: a hint for an undocumented code", err)
			}
		})
		t.Run(c.name+", minimax host", func(t *testing.T) {
			p := miniMaxAt(t, "http://api.minimax.io/v1", h)
			rq := req()
			rq.Stream = c.stream
			_, err := collect(p, rq)
			checkStatusError(t, err, `provider "mm"`, c.want)
		})
	}
}

func checkStatusError(t *testing.T, err error, provider, want string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, provider) || !strings.Contains(msg, want) {
		t.Errorf("err = %s\nwant it to start with %s and contain %q", msg, provider, want)
	}
	if strings.Contains(msg, key) || strings.Contains(msg, "no choices") {
		t.Errorf("err = %s: the key, or no choices", msg)
	}
}

// TestMiniMaxRefusalIn200IsRetried: a 200 whose first word is a code that stands for a status
// worth retrying (MiniMax's 1002 rate limit, 1000 unknown error: "please retry your requests
// later") is tried again as that HTTP status would be, sharing its count of attempts and its
// waits. A refusal that is not for now (1004, the key), or one after events were yielded, is
// reported at once: another attempt would yield those events twice.
func TestMiniMaxRefusalIn200IsRetried(t *testing.T) {
	refusal := func(code int, msg string) string {
		return fmt.Sprintf(`{"id":"","choices":null,"base_resp":{"status_code":%d,"status_msg":%q}}`, code, msg)
	}
	streamed := miniMaxChunk("hello", "") + miniMaxChunk("", "stop") + "data: [DONE]\n\n"
	type answer struct {
		status int
		body   string
	}
	for _, c := range []struct {
		name     string
		stream   bool
		answers  []answer // the last one repeats
		wantErr  string   // "" for the text "hello"
		sleeps   []time.Duration
		attempts int
	}{
		{"whole, then ok", false, []answer{{200, refusal(1002, "rate limit")}, {200, okBody}}, "", []time.Duration{time.Second}, 2},
		{"stream, then ok", true, []answer{{200, "data: " + refusal(1002, "rate limit") + "\n\n"}, {200, streamed}}, "", []time.Duration{time.Second}, 2},
		{"unknown error, then ok", false, []answer{{200, refusal(1000, "unknown error")}, {200, okBody}}, "", []time.Duration{time.Second}, 2},
		{"an HTTP 429, a refused 200, then ok", false, []answer{{429, `{"error":{"message":"slow"}}`}, {200, refusal(1002, "rate limit")}, {200, okBody}}, "", []time.Duration{time.Second, 2 * time.Second}, 3},
		{"refused every time", false, []answer{{200, refusal(1002, "rate limit")}},
			`provider "p": provider error (status_code 1002): rate limit (after 2 retries) — rate limited: wait and try again, or use another model`,
			[]time.Duration{time.Second, 2 * time.Second}, 3},
		{"the key is not retried", false, []answer{{200, refusal(1004, "login fail")}, {200, okBody}},
			`provider "p": provider error (status_code 1004): login fail — check the API key: set models.providers.p.apiKey`, nil, 1},
		{"not after events", true, []answer{{200, miniMaxChunk("hel", "") + "data: " + refusal(1002, "rate limit") + "\n\n"}, {200, streamed}},
			`provider "p": provider error (status_code 1002): rate limit — rate limited: wait and try again, or use another model`, nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			url := server(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				a := c.answers[min(n, len(c.answers)-1)]
				n++
				mu.Unlock()
				w.WriteHeader(a.status)
				io.WriteString(w, a.body)
			})
			var sleeps []time.Duration
			p, _, err := registry(t, custom(url), map[string]string{"P_KEY": key}, &sleeps).Resolve("p/MiniMax-M2.7")
			if err != nil {
				t.Fatal(err)
			}
			rq := req()
			rq.Stream = c.stream
			text, err := collect(p, rq)
			switch {
			case c.wantErr == "" && (err != nil || text != "hello"):
				t.Errorf("text %q, err %v; want hello", text, err)
			case c.wantErr != "" && (err == nil || err.Error() != c.wantErr):
				t.Errorf("err = %v\nwant %s", err, c.wantErr)
			}
			if diff := cmp.Diff(c.sleeps, sleeps); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if n != c.attempts {
				t.Errorf("attempts = %d, want %d", n, c.attempts)
			}
			var pe *provider.Error
			if limited := strings.Contains(c.wantErr, "status_code 1002"); err != nil && (!errors.As(err, &pe) || pe.RateLimited() != limited) {
				t.Errorf("err %v: RateLimited() is not %v", err, limited)
			}
		})
	}
}
