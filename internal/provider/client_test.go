package provider_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/provider"
)

const anthropicOK = `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`

// TestRedirectsKeepTheKeyAtHome: net/http forwards every header but Authorization to the host a
// redirect names, so an x-api-key (and the Referer, which carries the base URL) would reach it.
func TestRedirectsKeepTheKeyAtHome(t *testing.T) {
	var elsewhere http.Header
	other := server(t, func(w http.ResponseWriter, r *http.Request) {
		elsewhere = r.Header.Clone()
		io.WriteString(w, anthropicOK)
	})
	// Another host: the same server under another name.
	other = strings.Replace(other, "127.0.0.1", "localhost", 1)
	var home http.Header
	first := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved/messages" {
			home = r.Header.Clone()
			io.WriteString(w, anthropicOK)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/self/") {
			http.Redirect(w, r, "/moved/messages", http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, other+r.URL.Path, http.StatusTemporaryRedirect)
	})
	for _, c := range []struct {
		name, base, wantErr string
	}{
		{"same host", first + "/self", ""},
		{"another host", first + "/v1", `provider "anthropic": redirected to ` + other + ` — nodmix sends the key only to models.providers.anthropic.baseUrl: set it to the new address if it is the provider's`},
	} {
		t.Run(c.name, func(t *testing.T) {
			elsewhere, home = nil, nil
			r := registry(t, fmt.Sprintf(`{models: {providers: {anthropic: {baseUrl: %q, headers: {"X-Team": "team-token-123"}}}}}`, c.base), map[string]string{"ANTHROPIC_API_KEY": key}, nil)
			p, _, _ := r.Resolve("anthropic/claude-sonnet-4-6")
			text, err := collect(p, req())
			if c.wantErr == "" {
				if err != nil || text != "hello" || home.Get("X-Api-Key") != key {
					t.Errorf("text %q err %v key at home %q", text, err, home.Get("X-Api-Key"))
				}
				return
			}
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("err = %v\nwant %s", err, c.wantErr)
			}
			if elsewhere != nil {
				t.Errorf("the other host was called with %v", elsewhere)
			}
		})
	}
}

// TestBaseURLWithCredentialsAndQuery: a base URL may carry a password and a query (an api-key
// or api-version parameter). The request goes to the base path plus the dialect's, with the
// query after it; the dry run, the errors, and what the provider echoes of the request never
// show the password or the query's values.
func TestBaseURLWithCredentialsAndQuery(t *testing.T) {
	const pass, qkey = "pass-word-123", "query-key-456"
	var gotPath, gotQuery string
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotQuery = r.URL.Path, r.URL.RawQuery
		// As OpenAI answers a path it does not serve: the request line echoed.
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"message":"Invalid URL (POST %s)","type":"invalid_request_error"}}`, r.URL.RequestURI())
	})
	base := strings.Replace(url, "http://", "http://user:"+pass+"@", 1) + "/v1?api-key=" + qkey
	for _, api := range []string{"openai-completions", "google-generative-ai"} {
		t.Run(api, func(t *testing.T) {
			r := registry(t, fmt.Sprintf(`{models: {providers: {p: {api: %q, baseUrl: %q}}}}`, api, base), nil, nil)
			p, _, _ := r.Resolve("p/m")
			rq := req()
			rq.Stream = true
			pr, err := p.Prepare(rq, llm.Patch{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = collect(p, rq)
			wantPath, wantQuery := "/v1/chat/completions", "api-key="+qkey
			if api == "google-generative-ai" {
				wantPath, wantQuery = "/v1/models/m:streamGenerateContent", "api-key="+qkey+"&alt=sse"
			}
			if gotPath != wantPath || gotQuery != wantQuery {
				t.Errorf("sent to %s?%s, want %s?%s", gotPath, gotQuery, wantPath, wantQuery)
			}
			wantURL := strings.Replace(url, "http://", "http://user:********@", 1) + wantPath + "?" + strings.ReplaceAll(wantQuery, qkey, "********")
			if pr.URL != wantURL {
				t.Errorf("dry-run URL = %s\nwant %s", pr.URL, wantURL)
			}
			var ue *neturl.Error
			if err == nil || errors.As(err, &ue) {
				t.Fatalf("err = %v", err)
			}
			for _, s := range []string{pass, qkey} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("%q leaked into the error: %v", s, err)
				}
			}
		})
	}
}

// TestTransportErrorsHideTheURL: net/http's own errors (a *url.Error) quote the request URL with
// its query; the error chain a caller may print holds it without.
func TestTransportErrorsHideTheURL(t *testing.T) {
	r := registry(t, `{models: {providers: {p: {baseUrl: "http://127.0.0.1:1/v1?api-key=query-key-456"}}}}`, nil, nil)
	p, _, _ := r.Resolve("p/m")
	_, err := collect(p, req())
	var ue *neturl.Error
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want a *url.Error in its chain", err)
	}
	for e := error(err); e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), "query-key-456") {
			t.Errorf("the query leaked into %T: %v", e, e)
		}
	}
}

var dialectAPIs = []string{"openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai", "ollama"}

// outcome is how a call ended: "done: <text>" or "error: <message>".
func outcome(p *provider.Provider, r *llm.Request) string {
	text, err := collect(p, r)
	if err != nil {
		return "error: " + err.Error()
	}
	return "done: " + text
}

// TestA200ThatIsNotAnAnswer: a 200 whose body is an error in a shape the dialect does not
// expect, or no answer at all, is an error that says what the provider said; never an empty
// answer, never an error without the provider's words.
func TestA200ThatIsNotAnAnswer(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"error as a string", `{"error":"quota exceeded for this key"}`, `error: provider "p": provider error: quota exceeded for this key`},
		{"error without a message", `{"error":{"code":"quota_exceeded"}}`, `quota_exceeded`},
		{"an empty object", `{}`, `error: provider "p": `},
		{"null", `null`, `error: provider "p": `},
	} {
		for _, api := range dialectAPIs {
			t.Run(c.name+"/"+api, func(t *testing.T) {
				url := server(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, c.body)
				})
				r := registry(t, fmt.Sprintf(`{models: {providers: {p: {api: %q, baseUrl: %q}}}}`, api, url), nil, nil)
				p, _, _ := r.Resolve("p/m")
				got := outcome(p, req())
				if !strings.Contains(got, c.want) || !strings.HasPrefix(got, "error: ") {
					t.Errorf("got %s\nwant one with %s", got, c.want)
				}
			})
		}
	}
}

// TestAStreamAnsweredWithADocument: a 200 to a streamed request whose body is one JSON document
// (an error, or an answer from a server that does not stream) or an HTML page is not read as
// a stream that ended early ("try again"): the call reports what the body says.
func TestAStreamAnsweredWithADocument(t *testing.T) {
	for _, c := range []struct {
		name, ct, body string
		apis           []string
		want           string
	}{
		{"a JSON error", "application/json", "\n" + `{"error":{"message":"model m does not exist","type":"invalid_request_error"}}`, dialectAPIs,
			`error: provider "p": provider error`},
		{"an HTML page", "text/html", "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>", dialectAPIs,
			`error: provider "p": answered with an HTML page, not the API's response — check models.providers.p.baseUrl`},
		{"a whole completion", "application/json", okBody, []string{"openai-completions"}, "done: hello"},
	} {
		for _, api := range c.apis {
			t.Run(c.name+"/"+api, func(t *testing.T) {
				url := server(t, func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", c.ct)
					io.WriteString(w, c.body)
				})
				r := registry(t, fmt.Sprintf(`{models: {providers: {p: {api: %q, baseUrl: %q}}}}`, api, url), nil, nil)
				p, _, _ := r.Resolve("p/m")
				for _, stream := range []bool{true, false} {
					rq := req()
					rq.Stream = stream
					got := outcome(p, rq)
					if !strings.HasPrefix(got, c.want) || c.name == "a JSON error" && !strings.Contains(got, "model m does not exist") {
						t.Errorf("stream %v: got %s\nwant %s…", stream, got, c.want)
					}
				}
			})
		}
	}
}

// TestStreamErrorsAreScrubbedAndBounded: an error event inside a stream that echoes the key,
// at any length, reads without the key anywhere in the error chain, and at a bounded length
// cut on a character boundary.
func TestStreamErrorsAreScrubbedAndBounded(t *testing.T) {
	long := strings.Repeat("é", 50<<10)
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hel\"}}]}\n\n")
		fmt.Fprintf(w, "event: error\ndata: {\"error\":{\"message\":\"Invalid key %s: %s\",\"type\":\"auth\"}}\n\n", key, long)
	})
	r := registry(t, custom(url), map[string]string{"P_KEY": key}, nil)
	p, _, _ := r.Resolve("p/m")
	rq := req()
	rq.Stream = true
	_, err := collect(p, rq)
	if err == nil || !strings.HasPrefix(err.Error(), `provider "p": provider error (auth): Invalid key ********: é`) {
		t.Fatalf("err = %.200v", err)
	}
	if n := len(err.Error()); n > 1000 || !utf8.ValidString(err.Error()) {
		t.Errorf("the error is %d bytes, valid UTF-8: %v", n, utf8.ValidString(err.Error()))
	}
	var se *llm.StreamError
	if !errors.As(err, &se) {
		t.Fatalf("no *llm.StreamError in %v", err)
	}
	for e := error(err); e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), key) {
			t.Errorf("the key is in %T of the chain", e)
		}
	}
}

// TestShortKeysAreScrubbed: a short key (a local proxy's) that the provider echoes in its
// error does not reach the error either.
func TestShortKeysAreScrubbed(t *testing.T) {
	const short = "abc1234"
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s.","type":"invalid_request_error"}}`, short)
	})
	r := registry(t, custom(url), map[string]string{"P_KEY": short}, nil)
	p, _, _ := r.Resolve("p/m")
	_, err := collect(p, req())
	if err == nil || !strings.Contains(err.Error(), "Incorrect API key provided: ********.") {
		t.Fatalf("err = %v, want the provider's words with the key masked", err)
	}
	for e := error(err); e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), short) {
			t.Errorf("the key is in %T of the chain", e)
		}
	}
}

// TestAStreamThatNeverEnds: a provider that streams text without end (broken, or hostile)
// cannot make nodmix hold more than the bound of one response: the call ends with an error
// that says so, and the connection is dropped.
func TestAStreamThatNeverEnds(t *testing.T) {
	const bound = 1 << 20
	sent := make(chan int, 1)
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + strings.Repeat("x", 1000) + "\"}}]}\n\n")
		n := 0
		for n < 64*bound {
			m, err := w.Write(chunk)
			n += m
			if err != nil {
				break
			}
		}
		sent <- n
	})
	cfg, err := config.Parse([]byte(custom(url)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := provider.New(cfg, provider.Options{MaxResponse: bound, LookupEnv: func(string) (string, bool) { return key, true }})
	if err != nil {
		t.Fatal(err)
	}
	p, _, _ := r.Resolve("p/m")
	rq := req()
	rq.Stream = true
	_, err = collect(p, rq)
	if err == nil || err.Error() != `provider "p": the response grew past 1048576 bytes, more than any answer — check models.providers.p.baseUrl` {
		t.Errorf("err = %v", err)
	}
	if n := <-sent; n >= 64*bound {
		t.Errorf("the server wrote all of its %d bytes: the connection was not dropped", n)
	}
}

// TestRetriesStop: a stream that has begun is never sent again, whatever happens to it; and a
// context cancelled while a retry waits ends the call at once, without another attempt.
func TestRetriesStop(t *testing.T) {
	t.Run("a begun stream", func(t *testing.T) {
		var n atomic.Int32
		url := server(t, func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hel\"}}]}\n\n")
		})
		r := registry(t, custom(url), map[string]string{"P_KEY": key}, nil)
		p, _, _ := r.Resolve("p/m")
		rq := req()
		rq.Stream = true
		if _, err := collect(p, rq); !errors.Is(err, llm.ErrTruncated) {
			t.Errorf("err = %v", err)
		}
		if got := n.Load(); got != 1 {
			t.Errorf("%d requests, want 1", got)
		}
	})
	t.Run("a cancel while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var n atomic.Int32
		url := server(t, func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			w.Header().Set("Retry-After", "19")
			w.WriteHeader(http.StatusServiceUnavailable)
			cancel() // the client reads this answer and waits 19 s, or would
		})
		cfg, _ := config.Parse([]byte(custom(url)))
		r, err := provider.New(cfg, provider.Options{LookupEnv: func(string) (string, bool) { return key, true }})
		if err != nil {
			t.Fatal(err)
		}
		p, _, _ := r.Resolve("p/m")
		for _, err := range p.Stream(ctx, req(), llm.Patch{}) {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v", err)
			}
		}
		if got := n.Load(); got != 1 {
			t.Errorf("%d requests, want 1", got)
		}
	})
}

// TestCompressedAnswers: net/http undoes the gzip it asks for itself, not one a configured
// Accept-Encoding header asked for; either way the answer (and an error's words) read as sent,
// and an encoding nodmix cannot read says so.
func TestCompressedAnswers(t *testing.T) {
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		enc := r.URL.Query().Get("enc")
		w.Header().Set("Content-Encoding", enc)
		var body io.Writer = w
		if enc == "gzip" {
			z := gzip.NewWriter(w)
			defer z.Close()
			body = z
		}
		if r.URL.Query().Get("fail") != "" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(body, `{"error":{"message":"bad field"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(body, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello\"}}]}\n\ndata: [DONE]\n\n")
	})
	for _, c := range []struct{ query, header, want string }{
		{"enc=gzip", "", "done: hello"},
		{"enc=gzip", "gzip", "done: hello"},
		{"enc=gzip&fail=1", "gzip", `error: provider "p": 400 Bad Request: bad field — the provider refused the request`},
		{"enc=br", "br", `error: provider "p": answered in content encoding "br", which nodmix does not read — remove Accept-Encoding from models.providers.p.headers`},
	} {
		t.Run(c.query+"/"+c.header, func(t *testing.T) {
			headers := ""
			if c.header != "" {
				headers = fmt.Sprintf(`, headers: {"Accept-Encoding": %q}`, c.header)
			}
			r := registry(t, fmt.Sprintf(`{models: {providers: {p: {baseUrl: %q%s}}}}`, url+"/v1?"+c.query, headers), nil, nil)
			p, _, _ := r.Resolve("p/m")
			rq := req()
			rq.Stream = true
			if got := outcome(p, rq); got != c.want {
				t.Errorf("got %s\nwant %s", got, c.want)
			}
		})
	}
}
