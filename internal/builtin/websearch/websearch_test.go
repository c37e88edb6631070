package websearch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// fakeProvider records the queries it is given and answers with resp or err.
type fakeProvider struct {
	mu      sync.Mutex
	queries []Query
	resp    *Response
	err     error
}

func (f *fakeProvider) Search(_ context.Context, q Query) (*Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	return f.resp, f.err
}

func TestToolEntry(t *testing.T) {
	e := Tool(nil)
	got := struct {
		ID, Name, Owner string
		Source          catalog.Source
		Keys            []string
	}{e.Tool.ID, e.Tool.Name, e.Tool.Owner, e.Tool.Source, e.Tool.SchemaKeys()}
	want := struct {
		ID, Name, Owner string
		Source          catalog.Source
		Keys            []string
	}{"nodmix:core:web_search", "web_search", "core", catalog.SourceBuiltin, []string{"count", "query"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("entry (-want +got):\n%s", d)
	}
	var schema map[string]any
	if err := json.Unmarshal(e.Tool.InputSchema, &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if schema["additionalProperties"] != false {
		t.Errorf("schema must forbid additional properties: %v", schema)
	}
	if !catalog.ValidName(e.Tool.Name) {
		t.Errorf("name %q is not a valid model-facing name", e.Tool.Name)
	}
}

func TestExecute(t *testing.T) {
	score := 0.83
	okResp := &Response{
		Query: "go", Provider: "fake", Count: 1,
		ExternalContent: ExternalContent{Untrusted: true, Source: "web_search", Provider: "fake", Wrapped: true},
		Results:         []Result{{Title: "T", URL: "https://go.dev", Snippet: "S", Score: &score}},
	}
	tests := []struct {
		name        string
		args        string
		resolveErr  error
		provErr     error
		wantQueries []Query
		wantErr     bool
		wantText    string // substring of the result text
	}{
		{name: "query and count", args: `{"query":" go ","count":7}`, wantQueries: []Query{{Query: "go", Count: 7}}, wantText: `"provider": "fake"`},
		{name: "default count", args: `{"query":"go"}`, wantQueries: []Query{{Query: "go"}}, wantText: `"url": "https://go.dev"`},
		{name: "count null is absent", args: `{"query":"go","count":null}`, wantQueries: []Query{{Query: "go"}}, wantText: `"count": 1`},
		{name: "count 20 is the cap", args: `{"query":"go","count":20}`, wantQueries: []Query{{Query: "go", Count: 20}}, wantText: `"results"`},
		{name: "no provider configured", args: `{"query":"go"}`, resolveErr: ErrNoProvider, wantErr: true,
			wantText: "web_search is not configured: set tools.web.search.provider"},
		{name: "provider disabled", args: `{"query":"go"}`, resolveErr: errors.Join(ErrProviderUnavailable, errors.New(`"tavily"`)), wantErr: true,
			wantText: "plugins.entries.<id>.enabled=true"},
		{name: "provider error shown to the model", args: `{"query":"go"}`, provErr: errors.New("Tavily Search API error (432): over quota"),
			wantQueries: []Query{{Query: "go"}}, wantErr: true, wantText: "Tavily Search API error (432): over quota"},
		{name: "missing query", args: `{}`, wantErr: true, wantText: "web_search: query is required (a non-empty string)."},
		{name: "blank query", args: `{"query":"   "}`, wantErr: true, wantText: "web_search: query is required"},
		{name: "query not a string", args: `{"query":5}`, wantErr: true, wantText: "web_search: query must be a string."},
		{name: "count 0", args: `{"query":"go","count":0}`, wantErr: true, wantText: "web_search: count must be an integer from 1 to 20, got 0."},
		{name: "count 21", args: `{"query":"go","count":21}`, wantErr: true, wantText: "count must be an integer from 1 to 20, got 21."},
		{name: "count fraction", args: `{"query":"go","count":2.5}`, wantErr: true, wantText: "got 2.5."},
		{name: "count string", args: `{"query":"go","count":"5"}`, wantErr: true, wantText: `got "5".`},
		{name: "unknown argument", args: `{"query":"go","topic":"news"}`, wantErr: true, wantText: `web_search: unknown argument "topic" (allowed: query, count).`},
		{name: "not an object", args: `[1]`, wantErr: true, wantText: "arguments must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &fakeProvider{resp: okResp, err: tt.provErr}
			e := Tool(func() (Provider, error) {
				if tt.resolveErr != nil {
					return nil, tt.resolveErr
				}
				return fp, nil
			})
			res, err := e.Exec.Execute(context.Background(), catalog.Call{Tool: &e.Tool, Args: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if res.IsError != tt.wantErr {
				t.Errorf("IsError = %v, want %v (%s)", res.IsError, tt.wantErr, res.Text())
			}
			if !strings.Contains(res.Text(), tt.wantText) {
				t.Errorf("text %q does not contain %q", res.Text(), tt.wantText)
			}
			if d := cmp.Diff(tt.wantQueries, fp.queries); d != "" {
				t.Errorf("provider queries (-want +got):\n%s", d)
			}
			if !res.IsError {
				var back Response
				if err := json.Unmarshal(res.Structured, &back); err != nil {
					t.Fatalf("structured content: %v", err)
				}
				if d := cmp.Diff(*okResp, back); d != "" {
					t.Errorf("structured content (-want +got):\n%s", d)
				}
			}
		})
	}
}

func TestExecuteCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fp := &fakeProvider{err: context.Canceled}
	e := Tool(func() (Provider, error) { return fp, nil })
	_, err := e.Exec.Execute(ctx, catalog.Call{Tool: &e.Tool, Args: json.RawMessage(`{"query":"go"}`)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestExecuteNilResponse(t *testing.T) {
	e := Tool(func() (Provider, error) { return &fakeProvider{}, nil })
	res, err := e.Exec.Execute(context.Background(), catalog.Call{Tool: &e.Tool, Args: json.RawMessage(`{"query":"go"}`)})
	if err != nil || !res.IsError {
		t.Fatalf("res = %+v, err = %v; want an error result", res, err)
	}
}

func TestSelect(t *testing.T) {
	tav := &fakeProvider{}
	lookup := func(name string) (Provider, bool) {
		if name == "tavily" {
			return tav, true
		}
		return nil, false
	}
	tests := []struct {
		name    string
		setting string
		want    Provider
		wantErr error
	}{
		{"unset", "", nil, ErrNoProvider},
		{"blank", "  ", nil, ErrNoProvider},
		{"configured and enabled", "tavily", tav, nil},
		{"configured but disabled or unknown", "brave", nil, ErrProviderUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Select(tt.setting, lookup)()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if p != tt.want {
				t.Errorf("provider = %v, want %v", p, tt.want)
			}
		})
	}
	if _, err := Select("tavily", nil)(); !errors.Is(err, ErrProviderUnavailable) {
		t.Errorf("nil lookup: err = %v", err)
	}
}

func TestUnavailableTextNamesTheKey(t *testing.T) {
	e := Tool(Select("brave", func(string) (Provider, bool) { return nil, false }))
	res, _ := e.Exec.Execute(context.Background(), catalog.Call{Tool: &e.Tool, Args: json.RawMessage(`{"query":"go"}`)})
	want := `web_search cannot run: web search provider unavailable: "brave". Check tools.web.search.provider and enable the plugin that provides it (plugins.entries.<id>.enabled=true), or run ` + "`nodmix configure --section web`."
	if d := cmp.Diff(want, res.Text()); d != "" {
		t.Errorf("text (-want +got):\n%s", d)
	}
}

func TestJSONResult(t *testing.T) {
	res, err := JSONResult(map[string]any{"a": []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Structured), `{"a":[1]}`; got != want {
		t.Errorf("structured = %s, want %s", got, want)
	}
	if got, want := res.Text(), "{\n  \"a\": [\n    1\n  ]\n}"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if _, err := JSONResult(func() {}); err == nil {
		t.Error("JSONResult of a func: want an error")
	}
}

func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{`{"query":"go"}`, `{"query":"go","count":5}`, `{"count":21}`, `null`, `{"query":1e400}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		q, err := ParseArgs(raw)
		if err != nil {
			if q != (Query{}) {
				t.Fatalf("error with a non-zero query: %+v", q)
			}
			return
		}
		if q.Query == "" || strings.TrimSpace(q.Query) != q.Query {
			t.Fatalf("query %q is blank or untrimmed", q.Query)
		}
		if q.Count < 0 || q.Count > MaxCount {
			t.Fatalf("count %d out of range", q.Count)
		}
	})
}
