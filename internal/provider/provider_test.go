package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/provider"
)

const key = "sk-secret-key-0123456789"

func registry(t *testing.T, cfgText string, env map[string]string, sleeps *[]time.Duration) *provider.Registry {
	t.Helper()
	cfg, err := config.Parse([]byte(cfgText))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	r, err := provider.New(cfg, provider.Options{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Sleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			if sleeps != nil {
				*sleeps = append(*sleeps, d)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func req() *llm.Request {
	return &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "hi"}}}}}
}

// collect ranges a stream to its end.
func collect(p *provider.Provider, r *llm.Request) (string, error) {
	var text string
	for ev, err := range p.Stream(context.Background(), r, llm.Patch{}) {
		if err != nil {
			return text, err
		}
		if ev.Kind == llm.EventDone {
			text = ev.Message.Text()
		}
	}
	return text, nil
}

const okBody = `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`

func server(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func custom(url string) string {
	return fmt.Sprintf(`{models: {providers: {p: {baseUrl: %q, apiKey: {"$env": "P_KEY"}, headers: {"X-Team": "blue"}}}}}`, url)
}

func TestResolve(t *testing.T) {
	r := registry(t, `{models: {providers: {local: {baseUrl: "http://127.0.0.1:8000/v1"}}}}`, nil, nil)
	for _, c := range []struct{ ref, provider, model, err string }{
		{"openai/gpt-5.2", "openai", "gpt-5.2", ""},
		{"openrouter/deepseek/deepseek-v4", "openrouter", "deepseek/deepseek-v4", ""},
		{"local/qwen3", "local", "qwen3", ""},
		{"gpt-4o", "", "", `must be "<provider>/<model>"`},
		{"nope/x", "", "", `unknown provider "nope"`},
	} {
		p, m, err := r.Resolve(c.ref)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, want %q", c.ref, err, c.err)
			}
			continue
		}
		if err != nil || p.ID != c.provider || m != c.model {
			t.Errorf("%s: %v %q %v", c.ref, p, m, err)
		}
	}
	p, _ := r.Get("openai")
	if p.API != "openai-responses" || !p.Direct || p.BaseURL != "https://api.openai.com/v1" {
		t.Errorf("openai = %+v", p)
	}
	local, _ := r.Get("local")
	if local.API != "openai-completions" || local.Direct {
		t.Errorf("local = %+v", local)
	}
}

func TestAProxyBaseURLIsNotDirect(t *testing.T) {
	r := registry(t, `{models: {providers: {anthropic: {baseUrl: "https://proxy.example/anthropic/v1"}}}}`, nil, nil)
	p, _ := r.Get("anthropic")
	if p.Direct || p.API != "anthropic-messages" {
		t.Errorf("anthropic behind a proxy = %+v", p)
	}
}

func TestCustomProviderNeedsBaseURL(t *testing.T) {
	cfg, _ := config.Parse([]byte(`{models: {providers: {mine: {api: "openai-completions"}}}}`))
	_, err := provider.New(cfg, provider.Options{})
	if err == nil || !strings.Contains(err.Error(), "models.providers.mine.baseUrl: is required") {
		t.Errorf("err = %v", err)
	}
}

func TestKeysTravelInHeadersAndAreMasked(t *testing.T) {
	var got http.Header
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		io.WriteString(w, okBody)
	})
	r := registry(t, custom(url), map[string]string{"P_KEY": key}, nil)
	p, _, _ := r.Resolve("p/m")
	if text, err := collect(p, req()); err != nil || text != "hello" {
		t.Fatalf("text %q err %v", text, err)
	}
	if got.Get("Authorization") != "Bearer "+key || got.Get("X-Team") != "blue" {
		t.Errorf("headers sent = %v", got)
	}
	pr, err := p.Prepare(req(), llm.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	masked := pr.MaskedHeader()
	if masked.Get("Authorization") != "********" || strings.Contains(fmt.Sprint(masked), key) || strings.Contains(pr.URL, key) {
		t.Errorf("masked = %v url %s", masked, pr.URL)
	}
}

func TestNoKey(t *testing.T) {
	r := registry(t, `{}`, nil, nil)
	p, _, _ := r.Resolve("anthropic/claude-sonnet-4-6")
	_, err := collect(p, req())
	if !errors.Is(err, provider.ErrNoKey) || !strings.Contains(err.Error(), "set ANTHROPIC_API_KEY or models.providers.anthropic.apiKey") {
		t.Errorf("err = %v", err)
	}
	// Ollama needs none.
	o, _, _ := r.Resolve("ollama/llama3")
	if _, err := o.Prepare(req(), llm.Patch{}); err != nil {
		t.Errorf("ollama: %v", err)
	}
}

func TestStatusErrors(t *testing.T) {
	cases := []struct {
		name     string
		statuses []int
		header   map[string]string
		body     string
		wantErr  string
		sleeps   []time.Duration
		attempts int
	}{
		{"401 names the key", []int{401}, nil, `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`,
			`provider "p": 401 Unauthorized: Incorrect API key provided: ******** — check the API key: set models.providers.p.apiKey`, nil, 1},
		{"429 retried honouring retry-after, then ok", []int{429, 200}, map[string]string{"Retry-After": "3"}, "", "", []time.Duration{3 * time.Second}, 2},
		{"5xx retried twice then reported", []int{503, 502, 500}, nil, `{"error":{"message":"upstream down"}}`,
			`provider "p": 500 Internal Server Error: upstream down (after 2 retries) — the provider is failing: try again later`, []time.Duration{time.Second, 2 * time.Second}, 3},
		{"a long retry-after is not waited for", []int{429}, map[string]string{"Retry-After": "120"}, `{"error":{"message":"slow down"}}`,
			`provider "p": 429 Too Many Requests: slow down — rate limited: wait and try again, or use another model`, nil, 1},
		{"an absurd retry-after is not waited for", []int{503}, map[string]string{"Retry-After": "10000000000"}, `{"error":{"message":"down"}}`,
			`provider "p": 503 Service Unavailable: down — the provider is failing: try again later`, nil, 1},
		{"an absurd retry-after-ms is not waited for", []int{429}, map[string]string{"Retry-After-Ms": "1e300"}, `{"error":{"message":"slow down"}}`,
			`provider "p": 429 Too Many Requests: slow down — rate limited: wait and try again, or use another model`, nil, 1},
		{"an infinite retry-after is not waited for", []int{429}, map[string]string{"Retry-After": "Inf"}, `{"error":{"message":"slow down"}}`,
			`provider "p": 429 Too Many Requests: slow down — rate limited: wait and try again, or use another model`, nil, 1},
		{"retry-after-ms", []int{529, 200}, map[string]string{"Retry-After-Ms": "250"}, "", "", []time.Duration{250 * time.Millisecond}, 2},
		{"control characters read as spaces", []int{400}, nil, `{"error":{"message":"bad\u001b]52;c;aGk=\u0007 field\r\nnext\u009b2J\u007f"}}`,
			`provider "p": 400 Bad Request: bad ]52;c;aGk=  field  next 2J  — the provider refused the request`, nil, 1},
		// OpenRouter's documented 402 body (https://openrouter.ai/docs/api-reference/errors).
		{"402 says what to do", []int{402}, nil, `{"error":{"code":402,"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits"}}`,
			`provider "p": 402 Payment Required: Insufficient credits. Add more using https://openrouter.ai/settings/credits — the account is out of credit: check its balance with the provider`, nil, 1},
		{"a MiniMax status under an HTTP error", []int{500}, nil, `{"base_resp":{"status_code":1033,"status_msg":"system error"}}`,
			`provider "p": 500 Internal Server Error: system error (after 2 retries) — the provider is failing: try again later`, []time.Duration{time.Second, 2 * time.Second}, 3},
		{"400 is not retried", []int{400, 200}, nil, `{"error":{"message":"bad field"}}`, `provider "p": 400 Bad Request: bad field — the provider refused the request`, nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			url := server(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				status := c.statuses[min(n, len(c.statuses)-1)]
				n++
				mu.Unlock()
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				if status == 200 {
					io.WriteString(w, okBody)
					return
				}
				w.WriteHeader(status)
				io.WriteString(w, c.body)
			})
			var sleeps []time.Duration
			r := registry(t, custom(url), map[string]string{"P_KEY": key}, &sleeps)
			p, _, _ := r.Resolve("p/m")
			_, err := collect(p, req())
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || err.Error() != c.wantErr) {
				t.Errorf("err = %v\nwant %s", err, c.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Errorf("the key leaked into the error: %v", err)
			}
			if diff := cmp.Diff(c.sleeps, sleeps); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if n != c.attempts {
				t.Errorf("attempts = %d, want %d", n, c.attempts)
			}
		})
	}
}

func TestCutStream(t *testing.T) {
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hel\"}}]}\n\n")
	})
	r := registry(t, custom(url), map[string]string{"P_KEY": key}, nil)
	p, _, _ := r.Resolve("p/m")
	rq := req()
	rq.Stream = true
	_, err := collect(p, rq)
	var pe *provider.Error
	if !errors.As(err, &pe) || !errors.Is(err, llm.ErrTruncated) || !strings.Contains(err.Error(), "ended before it was complete") {
		t.Errorf("err = %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	for _, base := range []string{
		"http://user:pw@127.0.0.1:1/v1?token=abc",
		// A raw @ in the password: net/url splits at the last one.
		"http://user:pw@abc@127.0.0.1:1/v1",
	} {
		r := registry(t, fmt.Sprintf(`{models: {providers: {p: {baseUrl: %q}}}}`, base), nil, nil)
		p, _, _ := r.Resolve("p/m")
		_, err := collect(p, req())
		if err == nil || !strings.Contains(err.Error(), `provider "p": cannot reach http://127.0.0.1:1/v1`) || strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "abc") {
			t.Errorf("%s: err = %v", base, err)
		}
	}
}

func TestCancelStopsTheRequest(t *testing.T) {
	release := make(chan struct{})
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	r := registry(t, custom(url), map[string]string{"P_KEY": key}, nil)
	p, _, _ := r.Resolve("p/m")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	for _, err := range p.Stream(ctx, req(), llm.Patch{}) {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
	}
}

// TestKeysWithSpaceAround: a key read with a newline or a CR (pasted, or from a CRLF .env
// file) goes without it; sent as read, net/http refused the header and the call failed as if
// the network were down.
func TestKeysWithSpaceAround(t *testing.T) {
	var got []string
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"))
		if r.URL.Path == "/messages" {
			io.WriteString(w, anthropicOK)
			return
		}
		io.WriteString(w, okBody)
	})
	env := map[string]string{"P_KEY": key + "\r\n", "ANTHROPIC_API_KEY": " " + key + "\n"}
	r := registry(t, fmt.Sprintf(`{models: {providers: {p: {baseUrl: %q, apiKey: {"$env": "P_KEY"}}, anthropic: {baseUrl: %q}}}}`, url, url), env, nil)
	for _, ref := range []string{"p/m", "anthropic/claude-sonnet-4-6"} {
		p, _, _ := r.Resolve(ref)
		if _, err := collect(p, req()); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
	if want := []string{"Bearer " + key, key}; !cmp.Equal(got, want) {
		t.Errorf("keys sent %q, want %q", got, want)
	}
}
