package tavily

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// Each documented error status (§7.6), its body shapes, and which ones are retried (§7.7).
func TestErrorStatuses(t *testing.T) {
	const (
		e401 = `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`
		e432 = `{"detail":{"error":"This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com"}}`
		e433 = `{"detail":{"error":"This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard."}}`
		e429 = `{"detail":{"error":"Your request has been blocked due to excessive requests. Please reduce rate of requests."}}`
	)
	tests := []struct {
		name       string
		tool, args string
		replies    []reply
		wantText   string
		wantReqs   int
		wantSleeps []time.Duration
	}{
		{
			name: "400 bad request", tool: "tavily_search", args: `{"query":"q"}`,
			replies:  []reply{{400, nil, `{"detail":{"error":"Invalid topic. Must be 'general' or 'news'."}}`}},
			wantText: "Tavily Search API error (400): Invalid topic. Must be 'general' or 'news'.", wantReqs: 1,
		},
		{
			name: "400 on extract", tool: "tavily_extract", args: `{"urls":["https://go.dev"]}`,
			replies:  []reply{{400, nil, `{"detail":{"error":"Max 20 URLs are allowed."}}`}},
			wantText: "Tavily Extract API error (400): Max 20 URLs are allowed.", wantReqs: 1,
		},
		{
			name: "401 is not retried and says what to do", tool: "tavily_search", args: `{"query":"q"}`,
			replies: []reply{{401, nil, e401}},
			wantText: "Tavily Search API error (401): Unauthorized: missing or invalid API key. Check the Tavily API key " +
				"(plugins.entries.tavily.config.webSearch.apiKey or TAVILY_API_KEY); retrying will not help.",
			wantReqs: 1,
		},
		{
			name: "403", tool: "tavily_extract", args: `{"urls":["https://go.dev"]}`,
			replies: []reply{{403, nil, `{"detail":{"error":"[403] URL is not supported"}}`}}, wantReqs: 1,
			wantText: "Tavily Extract API error (403): [403] URL is not supported",
		},
		{
			name: "432 plan limit is not retried", tool: "tavily_search", args: `{"query":"q"}`,
			replies: []reply{{432, map[string]string{"Retry-After": "1"}, e432}}, wantReqs: 1,
			wantText: "Tavily Search API error (432): This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com " +
				"The Tavily plan or key usage limit is used up: raise the key limit or upgrade the plan on the Tavily dashboard (https://app.tavily.com). Retrying will not help.",
		},
		{
			name: "433 pay-as-you-go limit is not retried", tool: "tavily_extract", args: `{"urls":["https://go.dev"]}`,
			replies: []reply{{433, nil, e433}}, wantReqs: 1,
			wantText: "Tavily Extract API error (433): This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard. " +
				"The Tavily pay-as-you-go limit is reached: raise it on the Tavily dashboard (https://app.tavily.com). Retrying will not help.",
		},
		{
			name: "429 honours retry-after, then succeeds", tool: "tavily_search", args: `{"query":"q"}`,
			replies:  []reply{{429, map[string]string{"Retry-After": "2"}, e429}},
			wantText: `"provider": "tavily"`, wantReqs: 2, wantSleeps: []time.Duration{2 * time.Second},
		},
		{
			name: "429 with an HTTP-date retry-after", tool: "tavily_search", args: `{"query":"q"}`,
			replies:  []reply{{429, map[string]string{"Retry-After": "Tue, 01 Sep 2026 12:00:03 GMT"}, e429}},
			wantText: `"provider": "tavily"`, wantReqs: 2, wantSleeps: []time.Duration{3 * time.Second},
		},
		{
			name: "429 without retry-after backs off, bounded", tool: "tavily_search", args: `{"query":"q"}`,
			replies: []reply{{429, nil, e429}, {429, nil, e429}, {429, nil, e429}, {200, nil, docSearchResponse}},
			wantText: "Tavily Search API error (429): Your request has been blocked due to excessive requests. Please reduce rate of requests. " +
				"Still rate limited after 3 attempts; wait a minute before searching again.",
			wantReqs: 3, wantSleeps: []time.Duration{500 * time.Millisecond, time.Second},
		},
		{
			name: "429 asking for too long a wait is not retried", tool: "tavily_search", args: `{"query":"q"}`,
			replies: []reply{{429, map[string]string{"Retry-After": "120"}, e429}}, wantReqs: 1,
			wantText: "Tavily Search API error (429): Your request has been blocked due to excessive requests. Please reduce rate of requests. " +
				"Tavily asked to wait 120 s before retrying; try again later.",
		},
		{
			name: "5xx retried up to the bound", tool: "tavily_extract", args: `{"urls":["https://go.dev"]}`,
			replies:  []reply{{500, nil, `{"detail":{"error":"[500] Internal server error"}}`}, {502, nil, ""}, {503, nil, "upstream exploded"}},
			wantText: "Tavily Extract API error (503): upstream exploded Tavily kept failing after 3 attempts; try again later.",
			wantReqs: 3, wantSleeps: []time.Duration{500 * time.Millisecond, time.Second},
		},
		{
			name: "5xx then success", tool: "tavily_search", args: `{"query":"q"}`,
			replies:  []reply{{502, nil, "bad gateway"}},
			wantText: `"provider": "tavily"`, wantReqs: 2, wantSleeps: []time.Duration{500 * time.Millisecond},
		},
		{
			name: "503 honours retry-after", tool: "tavily_search", args: `{"query":"q"}`,
			replies:  []reply{{503, map[string]string{"Retry-After": "4"}, ""}},
			wantText: `"provider": "tavily"`, wantReqs: 2, wantSleeps: []time.Duration{4 * time.Second},
		},
		{
			name: "keyless envelope", tool: "tavily_search", args: `{"query":"q"}`,
			replies:  []reply{{429, map[string]string{"Retry-After": "90"}, `{"error":{"code":"daily_cap","message":"Keyless daily limit reached.","retry_after_seconds":90}}`}},
			wantText: "Tavily Search API error (429): Keyless daily limit reached. Tavily asked to wait 90 s before retrying; try again later.", wantReqs: 1,
		},
		{
			name: "FastAPI detail string", tool: "tavily_search", args: `{"query":"q"}`,
			replies:  []reply{{404, nil, `{"detail":"Not Found"}`}},
			wantText: "Tavily Search API error (404): Not Found", wantReqs: 1,
		},
		{
			name: "empty body gives the status text", tool: "tavily_search", args: `{"query":"q"}`,
			replies:  []reply{{418, nil, ""}},
			wantText: "Tavily Search API error (418): I'm a teapot", wantReqs: 1,
		},
		{
			name: "malformed JSON on 200", tool: "tavily_search", args: `{"query":"q"}`,
			replies:  []reply{{200, nil, "<html>oops</html>"}},
			wantText: "Tavily Search: malformed JSON response", wantReqs: 1,
		},
		{
			name: "JSON that is not an object", tool: "tavily_extract", args: `{"urls":["https://go.dev"]}`,
			replies:  []reply{{200, nil, "[]"}},
			wantText: "Tavily Extract: malformed JSON response", wantReqs: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{replies: tt.replies})
			res := r.call(t, tt.tool, tt.args)
			wantErr := !strings.HasPrefix(tt.wantText, `"provider"`)
			if res.IsError != wantErr {
				t.Errorf("IsError = %v, want %v: %s", res.IsError, wantErr, res.Text())
			}
			if wantErr && res.Text() != tt.wantText {
				t.Errorf("text:\n got %q\nwant %q", res.Text(), tt.wantText)
			}
			if !wantErr && !strings.Contains(res.Text(), tt.wantText) {
				t.Errorf("text %q lacks %q", res.Text(), tt.wantText)
			}
			if n := r.srv.count(); n != tt.wantReqs {
				t.Errorf("%d requests, want %d", n, tt.wantReqs)
			}
			if d := cmp.Diff(tt.wantSleeps, r.recordedSleeps()); d != "" {
				t.Errorf("waits (-want +got):\n%s", d)
			}
		})
	}
}

func TestLongErrorBodyIsShortened(t *testing.T) {
	r := newRig(t, rigOpts{replies: []reply{{400, nil, strings.Repeat("x", 10000)}}})
	res := r.call(t, "tavily_search", `{"query":"q"}`)
	if n := len(res.Text()); n > 2100 || !strings.HasSuffix(res.Text(), "...") {
		t.Errorf("error text is %d bytes: %q...", n, res.Text()[:80])
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"2", 2 * time.Second, true},
		{" 1.5 ", 1500 * time.Millisecond, true},
		{"0", 0, true},
		{"Tue, 01 Sep 2026 12:00:10 GMT", 10 * time.Second, true},
		{"Tue, 01 Sep 2026 11:00:00 GMT", 0, true}, // in the past: retry now
		{"", 0, false},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, ok := retryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	p := defaultRetry()
	var got []time.Duration
	for a := 1; a <= 7; a++ {
		got = append(got, p.backoff(a))
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("backoff (-want +got):\n%s", d)
	}
}

func TestTransportErrors(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		r := newRig(t, rigOpts{config: `{"webSearch":{"baseUrl":"http://127.0.0.1:1/"}}`})
		res := r.call(t, "tavily_search", `{"query":"q"}`)
		if !res.IsError || !strings.HasPrefix(res.Text(), "Tavily Search request failed: ") || strings.Contains(res.Text(), "127.0.0.1:1/search") {
			t.Errorf("result: %q", res.Text())
		}
	})
	t.Run("cancelled call is a Go error", func(t *testing.T) {
		r := newRig(t, rigOpts{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, e := range r.p.Tools() {
			_, err := e.Exec.Execute(ctx, callOf(&e, map[string]string{
				"tavily_search": `{"query":"q"}`, "tavily_extract": `{"urls":["https://go.dev"]}`,
			}[e.Tool.Name]))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: err = %v, want context.Canceled", e.Tool.Name, err)
			}
		}
	})
	t.Run("cancelled while waiting to retry", func(t *testing.T) {
		r := newRig(t, rigOpts{replies: []reply{{503, nil, ""}}})
		ctx, cancel := context.WithCancel(context.Background())
		r.p.client.sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
		e := r.p.Tools()[0]
		if _, err := e.Exec.Execute(ctx, callOf(&e, `{"query":"q"}`)); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestSleepCtx(t *testing.T) {
	if err := sleepCtx(context.Background(), time.Millisecond); err != nil {
		t.Errorf("sleep: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled sleep: %v", err)
	}
}

// The key never appears in logs, errors, results, cache keys or telemetry, whatever the server or
// the transport echo back.
func TestKeyNeverLeaks(t *testing.T) {
	echo := fmt.Sprintf(`{"detail":{"error":"bad key %s (Authorization: Bearer %s); also tvly-OtherTenantKey99"}}`, testKey, testKey)
	r := newRig(t, rigOpts{
		settings: map[string]any{settingCacheTTL: 15},
		replies: []reply{
			{401, nil, echo},
			{500, nil, "crash dump: api_key=" + testKey}, {500, nil, testKey}, {500, nil, testKey},
			{200, nil, docSearchResponse},
			{200, nil, docExtractResponse},
		},
	})
	var events []dispatch.Event
	pipe := &dispatch.Pipeline{Observers: []dispatch.Observer{observerFunc(func(ev dispatch.Event) { events = append(events, ev) })}}
	snap, err := catalog.NewSnapshot(1, r.p.Tools())
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range []struct{ tool, args string }{
		{"tavily_search", `{"query":"a"}`},
		{"tavily_search", `{"query":"b"}`},
		{"tavily_search", `{"query":"c"}`},
		{"tavily_extract", `{"urls":["https://go.dev"]}`},
		{"tavily_search", `{"query":"c"}`}, // cache hit
	} {
		res, err := pipe.Call(context.Background(), snap, dispatch.Request{Target: c.tool, Args: []byte(c.args), Surface: "test"})
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, res.Text(), string(res.Structured))
	}
	// A transport that puts the key in its error.
	r2 := newRig(t, rigOpts{client: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("proxy said no to " + testKey)
	})}})
	texts = append(texts, r2.call(t, "tavily_search", `{"query":"q"}`).Text())

	if !strings.Contains(texts[0], "[REDACTED]") || strings.Contains(texts[0], "OtherTenantKey") {
		t.Errorf("401 text not redacted: %s", texts[0])
	}
	all := strings.Join(texts, "\n") + r.logs.String() + r2.logs.String() + fmt.Sprintf("%+v", events)
	for _, k := range append(r.p.searches.keys(), r.p.extracts.keys()...) {
		all += k
	}
	if strings.Contains(all, testKey) || strings.Contains(all, "Sup3rS3cret") {
		t.Errorf("the key leaked:\n%s", all)
	}
	if r.p.searches.len() == 0 || r.p.extracts.len() == 0 || !strings.Contains(r.logs.String(), "tavily request") {
		t.Errorf("the test did not exercise the cache and the logs")
	}
}

type observerFunc func(dispatch.Event)

func (f observerFunc) Observe(ev dispatch.Event) { f(ev) }

// A successful answer that carries the key (a page where it was published, a proxy that echoes
// the request) does not hand it to the model either: every field it reaches is redacted.
func TestKeyNotInResults(t *testing.T) {
	search := fmt.Sprintf(`{"answer":"use %[1]s","results":[{"title":"key %[1]s","url":"https://example.com/?k=%[1]s",
 "content":"Authorization: Bearer %[1]s","score":0.5}]}`, testKey)
	extract := fmt.Sprintf(`{"results":[{"url":"https://example.com/%[1]s","raw_content":"TAVILY_API_KEY=%[1]s",
 "images":["https://example.com/%[1]s.png"]}],"failed_results":[{"url":"https://x.example/%[1]s","error":"echo %[1]s"}]}`, testKey)
	r := newRig(t, rigOpts{replies: []reply{{200, nil, search}, {200, nil, extract}}})
	var all []string
	for _, c := range []struct{ tool, args string }{
		{"tavily_search", `{"query":"a","include_answer":true}`},
		{"tavily_extract", `{"urls":["https://example.com/"]}`},
	} {
		res := r.call(t, c.tool, c.args)
		if res.IsError {
			t.Fatalf("%s: %s", c.tool, res.Text())
		}
		all = append(all, res.Text(), string(res.Structured))
	}
	got := strings.Join(all, "\n")
	if strings.Contains(got, testKey) {
		t.Errorf("the key reached the results:\n%s", got)
	}
	if n := strings.Count(got, "[REDACTED]"); n < 2*8 { // 4 search fields and 5 extract fields, in text and structured
		t.Errorf("%d redactions, want at least 16:\n%s", n, got)
	}
}

// An answer with far more entries than were asked for (a broken or hostile upstream) is cut to what
// the call asked for: each entry is wrapped for the model, so 100,000 one-letter results would
// otherwise become a result of tens of megabytes.
func TestOversizedAnswersAreCut(t *testing.T) {
	many := func(n int, item string) string { return strings.TrimSuffix(strings.Repeat(item+",", n), ",") }
	search := `{"results":[` + many(100000, `{"title":"t","url":"u","content":"c"}`) + `]}`
	extract := `{"results":[` + many(50000, `{"url":"u","raw_content":"r","images":[`+many(5, `"i"`)+`]}`) + `],` +
		`"failed_results":[` + many(50000, `{"url":"f","error":"e"}`) + `]}`
	images := `{"results":[{"url":"u","raw_content":"r","images":[` + many(100000, `"i"`) + `]}]}`
	r := newRig(t, rigOpts{replies: []reply{{200, nil, search}, {200, nil, extract}, {200, nil, images}}})
	tests := []struct {
		tool, args string
		check      func(m map[string]any) string
	}{
		{"tavily_search", `{"query":"a","max_results":3}`, func(m map[string]any) string {
			if n := len(m["results"].([]any)); n != 3 || m["count"] != float64(3) {
				return fmt.Sprintf("%d results (count %v), want 3", n, m["count"])
			}
			return ""
		}},
		{"tavily_extract", `{"urls":["https://example.com/a","https://example.com/b"]}`, func(m map[string]any) string {
			n, f := len(m["results"].([]any)), len(m["failedResults"].([]any))
			if n != 2 || m["count"] != float64(2) || f != 2 {
				return fmt.Sprintf("%d results (count %v) and %d failed, want 2 and 2", n, m["count"], f)
			}
			return ""
		}},
		{"tavily_extract", `{"urls":["https://example.com/c"],"include_images":true}`, func(m map[string]any) string {
			res := m["results"].([]any)[0].(map[string]any)
			if n := len(res["images"].([]any)); n != maxImages {
				return fmt.Sprintf("%d images, want %d", n, maxImages)
			}
			return ""
		}},
	}
	for _, tt := range tests {
		res := r.call(t, tt.tool, tt.args)
		if msg := tt.check(structured(t, res)); msg != "" {
			t.Errorf("%s %s: %s", tt.tool, tt.args, msg)
		}
		if n := len(res.Text()); n > 1<<20 {
			t.Errorf("%s %s: a result of %d bytes", tt.tool, tt.args, n)
		}
	}
}
