package tavily

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/builtin/websearch"
)

// Fact 6: headers, and the key only as a Bearer token (never in the body: improvements §6.10).
func TestRequestHeaders(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.call(t, "tavily_search", `{"query":"q"}`)
	r.call(t, "tavily_extract", `{"urls":["https://go.dev"]}`)
	for _, req := range r.srv.requests() {
		got := map[string]string{}
		for _, h := range []string{"Accept", "Authorization", "Content-Type", "X-Client-Source"} {
			got[h] = req.Header.Get(h)
		}
		want := map[string]string{
			"Accept":          "application/json",
			"Authorization":   "Bearer " + testKey,
			"Content-Type":    "application/json",
			"X-Client-Source": "nodmix",
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s headers (-want +got):\n%s", req.Path, d)
		}
		if req.Method != "POST" {
			t.Errorf("%s: method %s", req.Path, req.Method)
		}
		if _, ok := req.Body["api_key"]; ok || strings.Contains(req.Raw, testKey) {
			t.Errorf("%s: the key is in the body: %s", req.Path, req.Raw)
		}
	}
}

// Fact 7: the search body, field by field; unset options are omitted.
func TestSearchRequestBody(t *testing.T) {
	tests := []struct {
		name string
		args string
		want map[string]any
	}{
		{"minimal: default max_results 5", `{"query":"Go 1.25 release notes"}`,
			map[string]any{"query": "Go 1.25 release notes", "max_results": 5.0}},
		{"query trimmed", `{"query":"  go  "}`, map[string]any{"query": "go", "max_results": 5.0}},
		{"every option", `{"query":"Go 1.25 release notes","search_depth":"advanced","topic":"news","max_results":8,
			"include_answer":true,"time_range":"month","include_domains":["go.dev","Blog.Golang.org."],"exclude_domains":["pinterest.com"]}`,
			map[string]any{
				"query": "Go 1.25 release notes", "search_depth": "advanced", "topic": "news", "max_results": 8.0,
				"include_answer": true, "time_range": "month",
				"include_domains": []any{"go.dev", "blog.golang.org"}, "exclude_domains": []any{"pinterest.com"},
			}},
		{"include_answer false is not sent", `{"query":"q","include_answer":false}`, map[string]any{"query": "q", "max_results": 5.0}},
		{"finance topic, basic depth", `{"query":"q","topic":"finance","search_depth":"basic"}`,
			map[string]any{"query": "q", "max_results": 5.0, "topic": "finance", "search_depth": "basic"}},
		{"blank domains dropped, empty arrays not sent", `{"query":"q","include_domains":["", "  "],"exclude_domains":[]}`,
			map[string]any{"query": "q", "max_results": 5.0}},
		{"blank domains dropped, the rest kept", `{"query":"q","include_domains":["","go.dev"]}`,
			map[string]any{"query": "q", "max_results": 5.0, "include_domains": []any{"go.dev"}}},
		{"nulls are absent", `{"query":"q","topic":null,"max_results":null,"include_domains":null}`,
			map[string]any{"query": "q", "max_results": 5.0}},
		{"max_results bounds", `{"query":"q","max_results":20}`, map[string]any{"query": "q", "max_results": 20.0}},
		{"max_results as 1.0", `{"query":"q","max_results":1.0}`, map[string]any{"query": "q", "max_results": 1.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{})
			if res := r.call(t, "tavily_search", tt.args); res.IsError {
				t.Fatalf("error: %s", res.Text())
			}
			reqs := r.srv.requests()
			if len(reqs) != 1 || reqs[0].Path != "/search" {
				t.Fatalf("requests: %+v", reqs)
			}
			if d := cmp.Diff(tt.want, reqs[0].Body); d != "" {
				t.Errorf("body (-want +got):\n%s", d)
			}
		})
	}
}

// Fact 12: the extract body.
func TestExtractRequestBody(t *testing.T) {
	tests := []struct {
		name string
		args string
		want map[string]any
	}{
		{"urls only", `{"urls":["https://go.dev/doc/go1.25"]}`, map[string]any{"urls": []any{"https://go.dev/doc/go1.25"}}},
		{"every option", `{"urls":["https://go.dev/a","https://go.dev/b"],"query":"gc","extract_depth":"advanced","chunks_per_source":3,"include_images":true}`,
			map[string]any{"urls": []any{"https://go.dev/a", "https://go.dev/b"}, "query": "gc", "extract_depth": "advanced",
				"chunks_per_source": 3.0, "include_images": true}},
		{"include_images false not sent, blank urls dropped", `{"urls":["", "https://go.dev"],"include_images":false}`,
			map[string]any{"urls": []any{"https://go.dev"}}},
		{"query without chunks", `{"urls":["https://go.dev"],"query":" gc "}`, map[string]any{"urls": []any{"https://go.dev"}, "query": "gc"}},
		{"20 urls", `{"urls":[` + strings.TrimSuffix(strings.Repeat(`"https://go.dev",`, 20), ",") + `]}`,
			map[string]any{"urls": func() []any {
				out := make([]any, 20)
				for i := range out {
					out[i] = "https://go.dev"
				}
				return out
			}()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{})
			if res := r.call(t, "tavily_extract", tt.args); res.IsError {
				t.Fatalf("error: %s", res.Text())
			}
			reqs := r.srv.requests()
			if len(reqs) != 1 || reqs[0].Path != "/extract" {
				t.Fatalf("requests: %+v", reqs)
			}
			if d := cmp.Diff(tt.want, reqs[0].Body); d != "" {
				t.Errorf("body (-want +got):\n%s", d)
			}
		})
	}
}

// Fact 13: web_search maps to a Tavily search with max_results = count; without a count,
// tools.web.search.maxResults (5 when unset).
func TestWebSearchProvider(t *testing.T) {
	tests := []struct {
		name     string
		q        websearch.Query
		want     map[string]any
		settings map[string]any
	}{
		{"count", websearch.Query{Query: "go", Count: 12}, map[string]any{"query": "go", "max_results": 12.0}, nil},
		{"default count", websearch.Query{Query: "go"}, map[string]any{"query": "go", "max_results": 5.0}, nil},
		{"default count from config", websearch.Query{Query: "go"}, map[string]any{"query": "go", "max_results": 3.0},
			map[string]any{settingMaxResults: 3}},
		{"count over the configured default", websearch.Query{Query: "go", Count: 12}, map[string]any{"query": "go", "max_results": 12.0},
			map[string]any{settingMaxResults: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{settings: tt.settings})
			resp, err := r.p.WebSearchProvider().Search(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Provider != "tavily" || resp.Count != 3 || resp.Query != tt.q.Query {
				t.Errorf("response: %+v", resp)
			}
			reqs := r.srv.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			if d := cmp.Diff(tt.want, reqs[0].Body); d != "" {
				t.Errorf("body (-want +got):\n%s", d)
			}
		})
	}
}

// Through the generic tool: web_search → provider → the same documented request.
func TestWebSearchToolWithTavily(t *testing.T) {
	r := newRig(t, rigOpts{})
	e := websearch.Tool(websearch.Select("tavily", func(name string) (websearch.Provider, bool) {
		return r.p.WebSearchProvider(), name == "tavily"
	}))
	res, err := e.Exec.Execute(context.Background(), callOf(&e, `{"query":"Go 1.25 release notes","count":3}`))
	if err != nil {
		t.Fatal(err)
	}
	got := structured(t, res)
	if got["provider"] != "tavily" || got["count"] != 3.0 {
		t.Errorf("result: %v", got)
	}
	if reqs := r.srv.requests(); len(reqs) != 1 || reqs[0].Body["max_results"] != 3.0 {
		t.Errorf("requests: %+v", reqs)
	}
}

// Facts 8 and 12: the result structure, with wrapped web content and ISO 8601 dates.
func TestSearchResultGolden(t *testing.T) {
	r := newRig(t, rigOpts{})
	res := r.call(t, "tavily_search", `{"query":"Go 1.25 release notes","include_answer":true}`)
	if res.IsError {
		t.Fatal(res.Text())
	}
	golden(t, "search_result.json", []byte(res.Text()+"\n"))

	got := structured(t, res)
	results := got["results"].([]any)
	second := results[1].(map[string]any)
	if second["published"] != "2025-08-12T16:00:00Z" {
		t.Errorf("published = %v, want 2025-08-12T16:00:00Z", second["published"])
	}
	third := results[2].(map[string]any)
	if _, ok := third["published"]; ok {
		t.Errorf("a non-date was kept: %v", third["published"])
	}
	if _, ok := third["score"]; ok {
		t.Errorf("a non-numeric score was kept: %v", third["score"])
	}
	if third["title"] != "" {
		t.Errorf("an empty title was wrapped: %q", third["title"])
	}
	if !strings.HasPrefix(got["answer"].(string), "<<<EXTERNAL_UNTRUSTED_CONTENT id=") {
		t.Errorf("answer not wrapped: %q", got["answer"])
	}
}

func TestExtractResultGolden(t *testing.T) {
	r := newRig(t, rigOpts{})
	res := r.call(t, "tavily_extract", `{"urls":["https://go.dev/doc/go1.25","https://example.invalid/x"]}`)
	if res.IsError {
		t.Fatal(res.Text())
	}
	golden(t, "extract_result.json", []byte(res.Text()+"\n"))
	got := structured(t, res)
	want := []any{map[string]any{"url": "https://example.invalid/x", "error": "Failed to fetch url"}}
	if d := cmp.Diff(want, got["failedResults"]); d != "" {
		t.Errorf("failedResults (-want +got):\n%s", d)
	}
}

// Lenient mapping: the API's schema drifts (§8.14); odd shapes never fail the call.
func TestResponseShapes(t *testing.T) {
	tests := []struct {
		name, tool, args, body string
		wantCount              float64
		check                  func(t *testing.T, m map[string]any)
	}{
		{"no results field", "tavily_search", `{"query":"q"}`, `{"query":"q"}`, 0, nil},
		{"results not an array", "tavily_search", `{"query":"q"}`, `{"results":{"a":1}}`, 0, nil},
		{"non-object results skipped", "tavily_search", `{"query":"q"}`, `{"results":[1,"x",{"url":"https://a.example"}]}`, 1, nil},
		{"answer absent when not a string", "tavily_search", `{"query":"q"}`, `{"results":[],"answer":null}`, 0,
			func(t *testing.T, m map[string]any) {
				if _, ok := m["answer"]; ok {
					t.Errorf("answer: %v", m["answer"])
				}
			}},
		{"extract images as objects", "tavily_extract", `{"urls":["https://a.example"]}`,
			`{"results":[{"url":"https://a.example","raw_content":null,"content":"c","images":[{"url":"https://a.example/i.png","description":"d"},"https://a.example/j.png",5]}]}`, 1,
			func(t *testing.T, m map[string]any) {
				r := m["results"].([]any)[0].(map[string]any)
				if r["rawContent"] != "" {
					t.Errorf("rawContent = %q, want empty", r["rawContent"])
				}
				imgs := r["images"].([]any)
				if len(imgs) != 2 || !strings.Contains(imgs[0].(string), "https://a.example/i.png") {
					t.Errorf("images: %v", imgs)
				}
				if !strings.Contains(r["content"].(string), "Source: Web Fetch\n---\nc\n") {
					t.Errorf("content: %q", r["content"])
				}
			}},
		{"extract without failed results", "tavily_extract", `{"urls":["https://a.example"]}`, `{"results":[]}`, 0,
			func(t *testing.T, m map[string]any) {
				if _, ok := m["failedResults"]; ok {
					t.Errorf("failedResults present: %v", m["failedResults"])
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{replies: []reply{{status: 200, body: tt.body}}})
			m := structured(t, r.call(t, tt.tool, tt.args))
			if m["count"] != tt.wantCount {
				t.Errorf("count = %v, want %v", m["count"], tt.wantCount)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}

func TestNormalizePublished(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Tue, 12 Aug 2025 16:00:00 GMT", "2025-08-12T16:00:00Z", true},
		{"Tue, 2 Sep 2025 08:05:00 GMT", "2025-09-02T08:05:00Z", true},
		{"Tue, 12 Aug 2025 16:00:00 +0200", "2025-08-12T14:00:00Z", true},
		{"2025-08-12T16:00:00+02:00", "2025-08-12T14:00:00Z", true},
		{"2025-08-12T16:00:00.123Z", "2025-08-12T16:00:00Z", true},
		{"2025-08-12T16:00:00", "2025-08-12T16:00:00Z", true},
		{"2025-08-12 16:00:00", "2025-08-12T16:00:00Z", true},
		{"2025-08-12", "2025-08-12", true},
		{"August 12, 2025", "2025-08-12", true},
		{"  2025-08-12  ", "2025-08-12", true},
		{"", "", false},
		{"yesterday", "", false},
		{"2025-13-45", "", false},
		{"0001-01-01", "", false},
		// RFC 5322's zone names have fixed offsets; Go alone would read them as UTC.
		{"Tue, 12 Aug 2025 16:00:00 EST", "2025-08-12T21:00:00Z", true},
		{"Tue, 12 Aug 2025 16:00:00 PDT", "2025-08-12T23:00:00Z", true},
		{"Tue, 12 Aug 2025 22:30:00 CST", "2025-08-13T04:30:00Z", true},
		{"Tue, 12 Aug 2025 16:00:00 UTC", "2025-08-12T16:00:00Z", true},
		{"12 Aug 2025 16:00:00 MDT", "2025-08-12T22:00:00Z", true},
		// Any other name leaves the instant unknown: the date as written is kept.
		{"Tue, 12 Aug 2025 23:30:00 CET", "2025-08-12", true},
		{"Tue, 12 Aug 2025 16:00:00 IST", "2025-08-12", true},
	}
	for _, tt := range tests {
		got, ok := normalizePublished(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("normalizePublished(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
