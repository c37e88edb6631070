package tavily

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/builtin/websearch"
)

// Bad input is refused with a clear message and nothing is sent.
func TestBadInputSendsNothing(t *testing.T) {
	long := strings.Repeat("a", 400)
	urls21 := `[` + strings.TrimSuffix(strings.Repeat(`"https://go.dev",`, 21), ",") + `]`
	tests := []struct {
		name, tool, args, want string
	}{
		// tavily_search
		{"empty query", "tavily_search", `{"query":""}`, "tavily_search: query is required (a non-empty string)."},
		{"blank query", "tavily_search", `{"query":"  \n "}`, "tavily_search: query is required (a non-empty string)."},
		{"missing query", "tavily_search", `{}`, "tavily_search: query is required (a non-empty string)."},
		{"null arguments", "tavily_search", `null`, "tavily_search: query is required (a non-empty string)."},
		{"query not a string", "tavily_search", `{"query":["a"]}`, `tavily_search: query must be a string, got ["a"].`},
		{"400-character query", "tavily_search", `{"query":"` + long + `"}`,
			"tavily_search: query must be under 400 characters, got 400. Shorten it or split it into several searches."},
		{"400 characters counted as characters", "tavily_search", `{"query":"` + strings.Repeat("é", 400) + `"}`,
			"tavily_search: query must be under 400 characters, got 400. Shorten it or split it into several searches."},
		{"max_results 0", "tavily_search", `{"query":"q","max_results":0}`, "tavily_search: max_results must be an integer from 1 to 20, got 0."},
		{"max_results 21", "tavily_search", `{"query":"q","max_results":21}`, "tavily_search: max_results must be an integer from 1 to 20, got 21."},
		{"max_results negative", "tavily_search", `{"query":"q","max_results":-3}`, "tavily_search: max_results must be an integer from 1 to 20, got -3."},
		{"max_results fraction", "tavily_search", `{"query":"q","max_results":4.5}`, "tavily_search: max_results must be an integer from 1 to 20, got 4.5."},
		{"max_results huge", "tavily_search", `{"query":"q","max_results":1e300}`, "tavily_search: max_results must be an integer from 1 to 20, got 1e300."},
		{"max_results string", "tavily_search", `{"query":"q","max_results":"5"}`, `tavily_search: max_results must be an integer from 1 to 20, got "5".`},
		{"search_depth unknown", "tavily_search", `{"query":"q","search_depth":"ultra-fast"}`,
			`tavily_search: search_depth must be one of basic, advanced, got "ultra-fast".`},
		{"topic unknown", "tavily_search", `{"query":"q","topic":"sports"}`, `tavily_search: topic must be one of general, news, finance, got "sports".`},
		{"time_range short form", "tavily_search", `{"query":"q","time_range":"d"}`, `tavily_search: time_range must be one of day, week, month, year, got "d".`},
		{"include_answer string", "tavily_search", `{"query":"q","include_answer":"advanced"}`, `tavily_search: include_answer must be true or false, got "advanced".`},
		{"domain with a scheme", "tavily_search", `{"query":"q","include_domains":["https://go.dev"]}`,
			`tavily_search: include_domains[0] "https://go.dev" must be a bare hostname such as example.com, without a scheme (drop the http:// or https://).`},
		{"domain with a path", "tavily_search", `{"query":"q","exclude_domains":["ok.example","go.dev/blog"]}`,
			`tavily_search: exclude_domains[1] "go.dev/blog" must be a bare hostname such as example.com, without a path.`},
		{"domain with a port", "tavily_search", `{"query":"q","include_domains":["go.dev:443"]}`,
			`tavily_search: include_domains[0] "go.dev:443" must be a bare hostname such as example.com, without a port or user.`},
		{"domain with spaces", "tavily_search", `{"query":"q","include_domains":["go dev"]}`,
			`tavily_search: include_domains[0] "go dev" must be a bare hostname such as example.com; it is not a valid hostname.`},
		{"domain with an empty label", "tavily_search", `{"query":"q","include_domains":["go..dev"]}`,
			`tavily_search: include_domains[0] "go..dev" must be a bare hostname such as example.com; it is not a valid hostname.`},
		{"domains not strings", "tavily_search", `{"query":"q","include_domains":"go.dev"}`,
			`tavily_search: include_domains must be an array of strings, got "go.dev".`},
		{"too many excluded domains", "tavily_search", `{"query":"q","exclude_domains":[` + strings.TrimSuffix(strings.Repeat(`"a.example",`, 151), ",") + `]}`,
			"tavily_search: exclude_domains accepts at most 150 domains, got 151."},
		{"unknown argument", "tavily_search", `{"query":"q","days":3}`,
			`tavily_search: unknown argument "days" (allowed: query, search_depth, topic, max_results, include_answer, time_range, include_domains, exclude_domains).`},
		{"not an object", "tavily_search", `"q"`, "tavily_search: arguments must be a JSON object."},
		// tavily_extract
		{"no urls", "tavily_extract", `{}`, "tavily_extract requires at least one URL."},
		{"empty urls", "tavily_extract", `{"urls":[]}`, "tavily_extract requires at least one URL."},
		{"blank urls only", "tavily_extract", `{"urls":["", " "]}`, "tavily_extract requires at least one URL."},
		{"21 urls", "tavily_extract", `{"urls":` + urls21 + `}`,
			"tavily_extract: urls accepts at most 20 URLs per call, got 21. Batch larger lists into multiple tavily_extract calls."},
		{"url without a scheme", "tavily_extract", `{"urls":["go.dev/doc"]}`,
			`tavily_extract: urls[0] "go.dev/doc" must be an absolute http(s) URL such as https://example.com/page.`},
		{"url of another scheme", "tavily_extract", `{"urls":["https://go.dev","file:///etc/passwd"]}`,
			`tavily_extract: urls[1] "file:///etc/passwd" must be an absolute http(s) URL such as https://example.com/page.`},
		{"urls not an array", "tavily_extract", `{"urls":"https://go.dev"}`, `tavily_extract: urls must be an array of strings, got "https://go.dev".`},
		{"chunks_per_source without query", "tavily_extract", `{"urls":["https://go.dev"],"chunks_per_source":3}`,
			"tavily_extract requires query when chunks_per_source is set."},
		{"chunks_per_source with a blank query", "tavily_extract", `{"urls":["https://go.dev"],"query":"  ","chunks_per_source":3}`,
			"tavily_extract requires query when chunks_per_source is set."},
		{"chunks_per_source 6", "tavily_extract", `{"urls":["https://go.dev"],"query":"q","chunks_per_source":6}`,
			"tavily_extract: chunks_per_source must be an integer from 1 to 5, got 6."},
		{"chunks_per_source 0", "tavily_extract", `{"urls":["https://go.dev"],"query":"q","chunks_per_source":0}`,
			"tavily_extract: chunks_per_source must be an integer from 1 to 5, got 0."},
		{"extract_depth unknown", "tavily_extract", `{"urls":["https://go.dev"],"extract_depth":"deep"}`,
			`tavily_extract: extract_depth must be one of basic, advanced, got "deep".`},
		{"include_images number", "tavily_extract", `{"urls":["https://go.dev"],"include_images":1}`,
			"tavily_extract: include_images must be true or false, got 1."},
		{"unknown extract argument", "tavily_extract", `{"urls":["https://go.dev"],"format":"text"}`,
			`tavily_extract: unknown argument "format" (allowed: urls, query, extract_depth, chunks_per_source, include_images).`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{})
			res := r.call(t, tt.tool, tt.args)
			if !res.IsError || res.Text() != tt.want {
				t.Errorf("result (error %v):\n got %q\nwant %q", res.IsError, res.Text(), tt.want)
			}
			if n := r.srv.count(); n != 0 {
				t.Errorf("%d requests were sent for bad input", n)
			}
		})
	}
}

func TestWebSearchProviderBadInput(t *testing.T) {
	tests := []struct {
		name string
		q    websearch.Query
		want string
	}{
		{"empty", websearch.Query{}, "web_search: query is required (a non-empty string)."},
		{"too long", websearch.Query{Query: strings.Repeat("x", 450)}, "web_search: query must be under 400 characters, got 450. Shorten it or split it into several searches."},
		{"count too high", websearch.Query{Query: "q", Count: 21}, "web_search: count must be an integer from 1 to 20, got 21."},
		{"negative count", websearch.Query{Query: "q", Count: -1}, "web_search: count must be an integer from 1 to 20, got -1."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{})
			_, err := r.p.WebSearchProvider().Search(context.Background(), tt.q)
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalidArguments) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			if n := r.srv.count(); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

func TestCheckHostname(t *testing.T) {
	ok := map[string]string{
		"go.dev": "go.dev", "Docs.Example.co.uk": "docs.example.co.uk", "example.com.": "example.com",
		"gov": "gov", "*.example.com": "*.example.com", "bücher.example": "bücher.example", "xn--bcher-kva.example": "xn--bcher-kva.example",
		"a-b.example": "a-b.example", "123.example": "123.example",
	}
	for in, want := range ok {
		if got, problem := checkHostname(in); problem != "" || got != want {
			t.Errorf("checkHostname(%q) = %q, %q; want %q", in, got, problem, want)
		}
	}
	for _, in := range []string{
		"http://go.dev", "https://go.dev", "HTTPS://go.dev", "http:go.dev", "//go.dev", "go.dev/", "go.dev?x=1", "go.dev#x",
		"user@go.dev", "[::1]", "-go.dev", "go-.dev", "go_dev.example", ".", "*.", "*", strings.Repeat("a", 64) + ".example",
		strings.Repeat("a.", 127) + "example",
	} {
		if got, problem := checkHostname(in); problem == "" {
			t.Errorf("checkHostname(%q) accepted it as %q", in, got)
		}
	}
}

// The schemas name exactly the arguments the parsers accept.
func TestSchemasMatchParsers(t *testing.T) {
	valid := map[string]string{
		"query": `"q"`, "search_depth": `"advanced"`, "topic": `"news"`, "max_results": `3`, "include_answer": `true`,
		"time_range": `"week"`, "include_domains": `["go.dev"]`, "exclude_domains": `["x.example"]`,
		"urls": `["https://go.dev"]`, "extract_depth": `"basic"`, "chunks_per_source": `2`, "include_images": `true`,
	}
	for _, tc := range []struct {
		schema   string
		required string
		parse    func(json.RawMessage) error
	}{
		{searchSchema, "query", func(r json.RawMessage) error { _, err := parseSearchArgs(r); return err }},
		{extractSchema, "urls", func(r json.RawMessage) error { _, err := parseExtractArgs(r); return err }},
	} {
		var s struct {
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal([]byte(tc.schema), &s); err != nil {
			t.Fatalf("schema is not JSON: %v", err)
		}
		if len(s.Required) != 1 || s.Required[0] != tc.required || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("schema required %v, additionalProperties %v", s.Required, s.AdditionalProperties)
		}
		for name := range s.Properties {
			args := map[string]json.RawMessage{tc.required: json.RawMessage(valid[tc.required]), name: json.RawMessage(valid[name])}
			if name == "chunks_per_source" {
				args["query"] = json.RawMessage(`"q"`)
			}
			raw, _ := json.Marshal(args)
			if err := tc.parse(raw); err != nil {
				t.Errorf("schema property %q is refused by the parser: %v", name, err)
			}
		}
		if err := tc.parse(json.RawMessage(`{"` + tc.required + `":` + valid[tc.required] + `,"extra":1}`)); err == nil {
			t.Error("the parser accepts a property the schema does not have")
		}
	}
}

func FuzzSearchArgs(f *testing.F) {
	for _, s := range []string{
		`{"query":"go"}`, `{"query":"go","max_results":20,"include_domains":["go.dev",""]}`,
		`{"query":"","topic":"news"}`, `{"query":"q","exclude_domains":["https://x"]}`, `null`, `{"query":"q","max_results":1e309}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := parseSearchArgs(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidArguments) {
				t.Fatalf("error %v is not ErrInvalidArguments", err)
			}
			return
		}
		if a.Query == "" || utf8.RuneCountInString(a.Query) > maxQueryChars || strings.TrimSpace(a.Query) != a.Query {
			t.Fatalf("accepted query %q", a.Query)
		}
		if a.MaxResults < 0 || a.MaxResults > maxResultsLimit {
			t.Fatalf("accepted max_results %d", a.MaxResults)
		}
		for _, d := range append(append([]string{}, a.IncludeDomains...), a.ExcludeDomains...) {
			if _, problem := checkHostname(d); problem != "" || strings.ContainsAny(d, "/:") {
				t.Fatalf("accepted domain %q", d)
			}
		}
	})
}

func FuzzExtractArgs(f *testing.F) {
	for _, s := range []string{
		`{"urls":["https://go.dev"]}`, `{"urls":["https://go.dev"],"query":"q","chunks_per_source":5}`,
		`{"urls":["https://go.dev"],"chunks_per_source":2}`, `{"urls":[]}`, `{"urls":["ftp://x"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := parseExtractArgs(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidArguments) {
				t.Fatalf("error %v is not ErrInvalidArguments", err)
			}
			return
		}
		if len(a.URLs) == 0 || len(a.URLs) > maxExtractURLs {
			t.Fatalf("accepted %d urls", len(a.URLs))
		}
		if a.ChunksPerSource != 0 && (a.Query == "" || a.ChunksPerSource > maxChunks || a.ChunksPerSource < 1) {
			t.Fatalf("accepted chunks_per_source %d with query %q", a.ChunksPerSource, a.Query)
		}
	})
}

func FuzzDecodeConfig(f *testing.F) {
	for _, s := range []string{
		`{"webSearch":{"apiKey":"tvly-x","baseUrl":"https://api.tavily.com"}}`, `{"webSearch":{"apiKey":{"$env":"K"}}}`,
		`{"webSearch":{"apiKye":1}}`, `{"webSearch":{"searchTimeoutSeconds":19.9}}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := decodeConfig(raw)
		if err != nil {
			return
		}
		if c.validate() == nil {
			if b := strings.TrimSpace(c.baseURL); b != "" && !absHTTPURL(b) {
				t.Fatalf("accepted base URL %q", c.baseURL)
			}
		}
	})
}

func FuzzNormalizePublished(f *testing.F) {
	for _, s := range []string{"Tue, 12 Aug 2025 16:00:00 GMT", "2025-08-12", "yesterday", "2025-08-12T16:00:00+02:00",
		"Tue, 12 Aug 2025 16:00:00 EST", "Tue, 12 Aug 2025 23:30:00 CET", "Tue, 31 Dec 2200 23:00:00 PST"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, ok := normalizePublished(s)
		if !ok {
			return
		}
		again, ok2 := normalizePublished(out)
		if !ok2 || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}

func BenchmarkParseSearchArgs(b *testing.B) {
	raw := json.RawMessage(`{"query":"Go 1.25 release notes","search_depth":"advanced","topic":"news","max_results":8,` +
		`"include_answer":true,"time_range":"month","include_domains":["go.dev","github.com"],"exclude_domains":["pinterest.com"]}`)
	for b.Loop() {
		if _, err := parseSearchArgs(raw); err != nil {
			b.Fatal(err)
		}
	}
}
