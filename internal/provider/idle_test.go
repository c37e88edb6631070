package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/config"
	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/provider"
)

// hangGuard bounds a test that would otherwise hang on the defect it tests.
const hangGuard = 20 * time.Second

func idleRegistry(t *testing.T, url string, idle time.Duration) *provider.Provider {
	t.Helper()
	cfg, err := config.Parse([]byte(custom(url)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := provider.New(cfg, provider.Options{
		IdleTimeout: idle,
		LookupEnv:   func(string) (string, bool) { return key, true },
		Sleep:       func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := r.Resolve("p/m")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run ranges a call to its end under the hang guard: the texts it saw and how it ended.
func run(t *testing.T, p *provider.Provider, rq *llm.Request, each func(llm.Event)) ([]string, error) {
	t.Helper()
	type result struct {
		texts []string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		for ev, err := range p.Stream(context.Background(), rq, llm.Patch{}) {
			if err != nil {
				res.err = err
				break
			}
			if ev.Kind == llm.EventText {
				res.texts = append(res.texts, ev.Text)
			}
			if each != nil {
				each(ev)
			}
		}
		done <- res
	}()
	select {
	case res := <-done:
		return res.texts, res.err
	case <-time.After(hangGuard):
		t.Fatal("the call did not end")
		return nil, nil
	}
}

func sseDelta(w io.Writer, text string) {
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", text)
	w.(http.Flusher).Flush()
}

// TestAProviderThatStopsAnswering: a provider that takes the request and then sends nothing,
// before its headers or in the middle of its body, ends the call after the idle bound with an
// error that names it, instead of holding the turn forever; the connection is closed, and the
// request is not sent again.
func TestAProviderThatStopsAnswering(t *testing.T) {
	const idle = 100 * time.Millisecond
	for _, c := range []struct {
		name   string
		stream bool
		before func(w http.ResponseWriter) // what the server sends before it stalls
		texts  []string
		want   string
	}{
		{"no headers/stream", true, nil, nil,
			`provider "p": no answer for 100ms — the provider stopped answering: try again later`},
		{"no headers/whole", false, nil, nil,
			`provider "p": no answer for 100ms — the provider stopped answering: try again later`},
		{"headers only", true, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
		}, nil, `provider "p": no answer for 100ms after the response began — the provider stopped answering: try again later`},
		{"mid-stream", true, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseDelta(w, "hel")
		}, []string{"hel"}, `provider "p": no answer for 100ms after the response began — the provider stopped answering: try again later`},
		{"mid-document", false, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","choices":[`)
			w.(http.Flusher).Flush()
		}, nil, `provider "p": no answer for 100ms after the response began — the provider stopped answering: try again later`},
		{"an error body", false, func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"overl`)
			w.(http.Flusher).Flush()
		}, nil, `provider "p": 503 Service Unavailable — the provider is failing: try again later`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var requests atomic.Int32
			closed := make(chan struct{}, 4)
			url := server(t, func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				// Read as a provider does; net/http then sees the connection close.
				io.Copy(io.Discard, r.Body)
				if c.before != nil {
					c.before(w)
				}
				select {
				case <-r.Context().Done(): // the client closed the connection
					closed <- struct{}{}
				case <-time.After(hangGuard):
				}
			})
			p := idleRegistry(t, url, idle)
			rq := req()
			rq.Stream = c.stream
			texts, err := run(t, p, rq, nil)
			if err == nil || err.Error() != c.want {
				t.Fatalf("err = %v\nwant %s", err, c.want)
			}
			if c.name != "an error body" && !errors.Is(err, provider.ErrIdle) {
				t.Errorf("err = %v, want one that is ErrIdle", err)
			}
			if strings.Join(texts, "") != strings.Join(c.texts, "") {
				t.Errorf("texts %q, want %q", texts, c.texts)
			}
			select {
			case <-closed:
			case <-time.After(hangGuard):
				t.Fatal("the connection stayed open")
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// TestASlowButSteadyProviderIsNotCut: the bound is on each wait, not on the call: a stream
// whose pieces come a little apart, longer in all than the bound, is read to its end; and so is
// one whose caller takes longer than the bound over an event, since nodmix is not waiting for
// the provider then.
func TestASlowButSteadyProviderIsNotCut(t *testing.T) {
	const idle = 300 * time.Millisecond
	const pieces = 20
	t.Run("a slow provider", func(t *testing.T) {
		url := server(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range pieces {
				time.Sleep(idle / 10) // pieces*idle/10 in all: twice the bound
				sseDelta(w, fmt.Sprint(i%10))
			}
			io.WriteString(w, "data: [DONE]\n\n")
		})
		p := idleRegistry(t, url, idle)
		rq := req()
		rq.Stream = true
		texts, err := run(t, p, rq, nil)
		if err != nil || len(texts) != pieces {
			t.Errorf("%d pieces, err %v; want %d and no error", len(texts), err, pieces)
		}
	})
	t.Run("a slow caller", func(t *testing.T) {
		url := server(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			sseDelta(w, "hel")
			// The rest comes while the caller is busy with the first piece, so the client
			// reads again only after that.
			time.Sleep(idle / 3)
			sseDelta(w, "lo")
			io.WriteString(w, "data: [DONE]\n\n")
		})
		p := idleRegistry(t, url, idle)
		rq := req()
		rq.Stream = true
		texts, err := run(t, p, rq, func(ev llm.Event) {
			if ev.Kind == llm.EventText {
				time.Sleep(2 * idle)
			}
		})
		if err != nil || strings.Join(texts, "") != "hello" {
			t.Errorf("texts %q, err %v; want hello and no error", texts, err)
		}
	})
}

// TestAStoppedCallerEndsTheCall: a caller that stops ranging mid-stream ends the request: the
// provider's connection is closed, and no timer left behind ends anything later.
func TestAStoppedCallerEndsTheCall(t *testing.T) {
	closed := make(chan struct{}, 1)
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseDelta(w, "hel")
		select {
		case <-r.Context().Done():
			closed <- struct{}{}
		case <-time.After(hangGuard):
		}
	})
	p := idleRegistry(t, url, time.Hour)
	rq := req()
	rq.Stream = true
	for ev, err := range p.Stream(context.Background(), rq, llm.Patch{}) {
		if err != nil || ev.Kind == llm.EventText {
			break
		}
	}
	select {
	case <-closed:
	case <-time.After(hangGuard):
		t.Fatal("the connection stayed open")
	}
}
