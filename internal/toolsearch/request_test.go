package toolsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

func TestSearchRequestErrors(t *testing.T) {
	q := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"query":"q%d","limit":1}`, i)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	e127 := strings.Repeat("é", 127)
	tests := []struct{ args, want string }{
		{`{}`, "provide query or queries."},
		{`{"query":null,"queries":null}`, "provide query or queries."},
		{`{"queries":{}}`, "queries must be a non-empty array."},
		{`{"queries":[]}`, "queries must be a non-empty array."},
		{`{"query":"  ","queries":[]}`, "queries must be a non-empty array."},
		{`{"query":3}`, "query must be a string."},
		{`{"query":"x","limit":0}`, "limit must be a positive integer."},
		{`{"query":"x","limit":1.5}`, "limit must be a positive integer."},
		{`{"query":"x","limit":"2"}`, "limit must be a positive integer."},
		{`{"query":"x","options":{"limit":-1}}`, "limit must be a positive integer."},
		{`{"queries":["x"]}`, "queries[0] must be an object."},
		{`{"queries":[{"query":"ok"},{"query":""}]}`, "queries[1].query must be a non-empty string."},
		{`{"queries":[{"query":" "}],"query":"a"}`, "queries[0].query must be a non-empty string."},
		{`{"queries":[{"query":"x","limit":0}]}`, "queries[0].limit must be a positive integer."},
		{`{"queries":[{"query":"` + strings.Repeat("a", 513) + `"}]}`, "queries[0].query must not exceed 512 characters."},
		{`{"query":null,"limit":1,"queries":[{"query":"x"}]}`, "set limit on each batch query, not on the batch request."},
		{`{"options":{},"queries":[{"query":"x"}]}`, "set limit on each batch query, not on the batch request."},
		{`{"query":"scalar","queries":` + q(16) + `}`, "queries may contain at most 16 entries."},
		{`{"queries":` + q(17) + `}`, "queries may contain at most 16 entries."},
		{`{"queries":[{"query":"a","limit":20},{"query":"b","limit":20},{"query":"c","limit":11}]}`,
			"batch queries resolve to 51 results, but may request at most 50 in total. An omitted limit counts as 8; set smaller per-query limits and retry."},
		// Limits are capped at the maximum (20) before they are summed: 20+20+8 fits.
		{`{"queries":[{"query":"a","limit":99},{"query":"b","limit":99},{"query":"c"}]}`, ""},
		{`{"queries":[{"query":"` + e127 + `"},{"query":"` + e127 + `"}]}`, "serialized batch query text may use at most 512 UTF-8 bytes."},
	}
	for _, tt := range tests {
		f := newFixture(t, goldenEntries(), nil, Options{})
		res := f.control(t, ToolSearch, tt.args)
		if tt.want == "" {
			if res.IsError {
				t.Errorf("%s: unexpected error %q", tt.args, res.Text())
			}
			continue
		}
		if !res.IsError || res.Text() != tt.want {
			t.Errorf("%s:\n got %q (error %v)\nwant %q", tt.args, res.Text(), res.IsError, tt.want)
		}
		// Validation is atomic: a rejected request runs no search.
		if n := f.rt.Telemetry().SearchCount; n != 0 {
			t.Errorf("%s: searchCount = %d after a rejected request", tt.args, n)
		}
	}
}

func TestSearchCounts(t *testing.T) {
	f := newFixture(t, goldenEntries(), nil, Options{})
	// Scalar-first ordering with distinct limits, searchCount 5 (reference §2.10.2).
	res := f.control(t, ToolSearch, `{"query":"issue","limit":1,"queries":[{"query":"search","limit":1},{"query":"open","limit":2},{"query":"file","limit":3}]}`)
	var resp batchResponse
	if err := json.Unmarshal(res.Structured, &resp); err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, g := range resp.Results {
		var ids []string
		for _, c := range g.Candidates {
			ids = append(ids, c.ID)
		}
		got = append(got, append([]string{g.Query}, ids...))
	}
	want := [][]string{
		{"issue", "nodmix:core:issue_create"},
		{"search", "nodmix:core:web_search"},
		{"open", "nodmix:core:issue_create", "nodmix:core:spreadsheet_open"},
		{"file", "nodmix:core:read_file"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("batch (-want +got):\n%s", diff)
	}
	f.control(t, ToolSearch, `{"query":"  "}`) // a blank scalar returns [] and still counts
	if n := f.rt.Telemetry().SearchCount; n != 5 {
		t.Errorf("searchCount = %d, want 5", n)
	}
}

func TestBlankScalarQuery(t *testing.T) {
	f := newFixture(t, goldenEntries(), nil, Options{})
	res := f.control(t, ToolSearch, `{"query":"   "}`)
	if res.IsError || res.Text() != "[]" {
		t.Fatalf("blank query: %q (error %v)", res.Text(), res.IsError)
	}
}

func TestGraphemes(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"é", 1}, {"e\u0301", 1}, {"👍🏽", 1}, {"👨‍👩‍👧", 1}, {"🇫🇷🇩🇪", 2}, {"❤️", 1}, {"価格", 2},
		// UAX #29's own examples (Table 1a): each is one cluster.
		{"g\u0308", 1}, {"\uAC01", 1}, {"\u1100\u1161\u11A8", 1}, {"\u0E01\u0E33", 1}, {"\u0BA8\u0BBF", 1}, {"\u0937\u093F", 1},
		{"\r\n", 1}, {"\n\u0301", 2}, {"a\u200Db", 2}, {"🇫🇷🇩", 2},
	}
	for _, tt := range tests {
		if got := graphemes(tt.s); got != tt.want {
			t.Errorf("graphemes(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

// TestGraphemeBreakConformance runs Unicode's grapheme break test cases (testdata, Unicode 15.0):
// graphemes must count the clusters each case marks.
func TestGraphemeBreakConformance(t *testing.T) {
	data, err := os.ReadFile("testdata/GraphemeBreakTest-15.0.0.txt")
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for i, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if strings.TrimSpace(line) == "" {
			continue
		}
		var text strings.Builder
		want := 0
		for _, f := range strings.Fields(line) {
			switch f {
			case "÷":
				want++
			case "×":
			default:
				cp, err := strconv.ParseUint(f, 16, 32)
				if err != nil {
					t.Fatalf("line %d: %q: %v", i+1, f, err)
				}
				text.WriteRune(rune(cp))
			}
		}
		want-- // the last ÷ ends the text and starts no cluster
		cases++
		if got := graphemes(text.String()); got != want {
			t.Errorf("line %d: graphemes(%+q) = %d, want %d", i+1, text.String(), got, want)
		}
	}
	if cases < 600 {
		t.Fatalf("read %d cases, want the file's 602", cases)
	}
}

func TestCallArgsRepair(t *testing.T) {
	entries := append(goldenEntries(),
		builtin("greet", "Greet someone", `{"type":"object","properties":{"name":{"type":"string"},"id":{"type":"string"}}}`),
		mcpTool("github", "create_issue", "Create an issue", ""),
		mcpTool("gitlab", "create_issue", "Create an issue", ""),
	)
	tests := []struct {
		args, wantID, wantInput, wantErr string
	}{
		{`{"id":"issue_create","args":{"repository":"a/b","title":"t"}}`, "issue_create", `{"repository":"a/b","title":"t"}`, ""},
		{`{"id":"issue_create","input":{"title":"t"}}`, "issue_create", `{"title":"t"}`, ""},
		{`{"id":"issue_create","repository":"a/b","title":"t"}`, "issue_create", `{"repository":"a/b","title":"t"}`, ""},
		{`{"id":"issue_create","args.title":"t","args":{"repository":"r"}}`, "issue_create", `{"title":"t","repository":"r"}`, ""},
		{`{"id":"issue_create","args.title":"t","repository":"r"}`, "issue_create", `{"title":"t","repository":"r"}`, ""},
		{`{"id":"issue_create","args":{},"title":"t"}`, "issue_create", `{"title":"t"}`, ""},
		{`{"toolId":"nodmix:core:issue_create","title":"t"}`, "nodmix:core:issue_create", `{"title":"t"}`, ""},
		// A name that is no tool is the target's own argument.
		{`{"id":"greet","name":"Ada"}`, "greet", `{"name":"Ada"}`, ""},
		{`{"name":"greet","id":"not-a-tool"}`, "greet", `{"id":"not-a-tool"}`, ""},
		// Two selectors naming the same tool are both removed.
		{`{"id":"nodmix:core:greet","name":"greet","x":1}`, "nodmix:core:greet", `{"x":1}`, ""},
		{`{"name":"issue_create","id":"read_file"}`, "", "", "Ambiguous tool selectors: pass the target tool id and nest target arguments under args."},
		// Unknown selector: the first present one is the id, the rest is input.
		{`{"id":"nope","a":1}`, "nope", `{"a":1}`, ""},
		{`{"args":{"a":1}}`, "", "", "id must be a non-empty string."},
		{`{"id":"  "}`, "", "", "id must be a non-empty string."},
		{`{"id":"issue_create","args":"text"}`, "issue_create", `"text"`, ""},
	}
	f := newFixture(t, entries, nil, Options{})
	for _, tt := range tests {
		p, err := parseValue([]byte(tt.args))
		if err != nil {
			t.Fatal(err)
		}
		id, input, err := f.rt.readCallArgs(p)
		if got := errText(err); tt.wantErr != "" || err != nil {
			if got != tt.wantErr {
				t.Errorf("%s: error %q, want %q", tt.args, got, tt.wantErr)
			}
			continue
		}
		if id != tt.wantID || string(input) != tt.wantInput {
			t.Errorf("%s: (%q, %s), want (%q, %s)", tt.args, id, input, tt.wantID, tt.wantInput)
		}
	}
}

func TestDescribeArgs(t *testing.T) {
	f := newFixture(t, goldenEntries(), nil, Options{})
	for _, args := range []string{`{"id":"issue_create"}`, `{"toolId":"issue_create"}`, `{"name":"issue_create"}`, `{"args":{"id":"issue_create"}}`, `{"input":{"name":"issue_create"}}`} {
		res := f.control(t, ToolDescribe, args)
		if res.IsError || !strings.Contains(res.Text(), `"parameters": {`) {
			t.Errorf("%s: %q", args, res.Text())
		}
	}
	for _, args := range []string{`{}`, `{"id":7}`, `{"args":{"title":"x"}}`} {
		if res := f.control(t, ToolDescribe, args); !res.IsError || res.Text() != "id must be a non-empty string." {
			t.Errorf("%s: %q", args, res.Text())
		}
	}
	if n := f.rt.Telemetry().DescribeCount; n != 5 {
		t.Errorf("describeCount = %d, want 5", n)
	}
}

// TestDescribeCutsHugeDescriptions: tool_describe gives the description a model is sent up
// front elsewhere, cut at catalog.MaxModelDescription.
func TestDescribeCutsHugeDescriptions(t *testing.T) {
	huge := strings.Repeat("word ", 1<<18)
	f := newFixture(t, []catalog.Entry{builtin("big", huge, `{"type":"object"}`)}, nil, Options{})
	res := f.control(t, ToolDescribe, `{"id":"big"}`)
	var d struct{ Description string }
	if err := json.Unmarshal([]byte(res.Text()), &d); err != nil {
		t.Fatalf("%v: %.200s", err, res.Text())
	}
	if want := (&catalog.Tool{Description: huge}).ModelDescription(); d.Description != want {
		t.Errorf("description of %d bytes, want the %d of ModelDescription", len(d.Description), len(want))
	}
}

// bigCatalog returns n tools that all match the word "widget", with long descriptions.
func bigCatalog(n int, desc string) []catalog.Entry {
	var out []catalog.Entry
	for i := range n {
		out = append(out, builtin(fmt.Sprintf("widget_%03d", i), desc, `{"type":"object","properties":{"size":{"type":"integer","minimum":1}}}`))
	}
	return out
}

func TestBatchResponseBudget(t *testing.T) {
	long := strings.Repeat("A widget tool with a long story. ", 40)
	f := newFixture(t, bigCatalog(60, long), nil, Options{})
	res := f.control(t, ToolSearch, `{"queries":[{"query":"widget","limit":20},{"query":"widget tool","limit":5},{"query":"story widget","limit":12}]}`)
	if res.IsError {
		t.Fatal(res.Text())
	}
	text := res.Text()
	if n := utf16Len(text); n > 4000 {
		t.Fatalf("response is %d chars, over 4000", n)
	}
	var resp batchResponse
	if err := json.Unmarshal([]byte(text), &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated {
		t.Fatal("response not marked truncated")
	}
	full := [][]Descriptor{
		f.rt.rank("widget", 20), f.rt.rank("widget tool", 5), f.rt.rank("story widget", 12),
	}
	minN, maxN := 1<<30, 0
	for i, g := range resp.Results {
		n := len(g.Candidates)
		minN, maxN = min(minN, n), max(maxN, n)
		// Each group keeps a prefix of its ranking, with descriptions cut to 180 characters.
		for j, c := range g.Candidates {
			if c.ID != full[i][j].ID {
				t.Errorf("group %d candidate %d is %s, want ranking prefix %s", i, j, c.ID, full[i][j].ID)
			}
			if utf16Len(c.Description) > 180 || !strings.HasSuffix(c.Description, "...") {
				t.Errorf("description not cut: %d chars", utf16Len(c.Description))
			}
		}
		if g.Truncated != (n < len(full[i])) {
			t.Errorf("group %d: truncated = %v with %d of %d", i, g.Truncated, n, len(full[i]))
		}
	}
	if maxN-minN > 1 {
		t.Errorf("group sizes range %d..%d, want within 1", minN, maxN)
	}
}

// TestBatchSizeIsExact checks the incremental size bookkeeping against a real serialization.
func TestBatchSizeIsExact(t *testing.T) {
	b := DefaultBatchBudget()
	for _, tc := range []struct {
		queries []batchQuery
		hits    [][]Descriptor
	}{
		{[]batchQuery{{query: "x"}}, [][]Descriptor{nil}},
		{[]batchQuery{{query: "é\"q"}, {query: "two"}}, [][]Descriptor{
			{{ID: "a:b:c", Source: "mcp", SourceName: "b", MCP: &MCPInfo{ServerName: "b", SafeServerName: "b", ToolName: "c"}, Name: "c", Label: "C", Description: "d\u2603\U0001F600", Input: "unknown"}},
			{{ID: "n:core:x", Source: "nodmix", Name: "x", Input: "{ a: string }"}, {ID: "n:core:y", Source: "nodmix", Name: "y", Input: "unknown", Description: "<&>"}},
		}},
	} {
		for _, trunc := range []bool{false, true} {
			resp := shapeBatch(b, tc.queries, tc.hits)
			var groups []*sizedGroup
			for i := range resp.Results {
				g := &resp.Results[i]
				g.Truncated = trunc
				sg := &sizedGroup{g: g, querySz: utf16Len(jsString(g.Query)), truncate: trunc}
				for _, c := range g.Candidates {
					sz := prettySizeAt(c, 4)
					sg.candSz = append(sg.candSz, sz)
					sg.sumCand += sz
				}
				groups = append(groups, sg)
			}
			resp.Truncated = trunc
			text, _ := marshalJS(resp, true)
			if got, want := responseSize(groups, trunc), utf16Len(string(text)); got != want {
				t.Errorf("computed size %d, serialized %d:\n%s", got, want, text)
			}
		}
	}
}

func TestBatchCandidateBudget(t *testing.T) {
	b := DefaultBatchBudget()
	huge := strings.Repeat("L", 3000)
	d := Descriptor{ID: "nodmix:core:t", Source: "nodmix", SourceName: "core", Name: "t", Label: huge, Description: huge, Input: "unknown"}
	c, ok := candidate(b, d)
	if !ok {
		t.Fatal("candidate with a callable identity was dropped")
	}
	if c.ID != d.ID || c.Name != "t" || c.Input != "unknown" || c.Label != "" || c.SourceName != "core" || utf16Len(c.Description) != 180 {
		t.Errorf("huge metadata not trimmed: %+v", c)
	}
	if _, ok := candidate(b, Descriptor{ID: strings.Repeat("i", 2100), Source: "nodmix", Name: "n", Input: "unknown"}); ok {
		t.Error("candidate whose identity alone is over budget was kept")
	}
}

// FuzzSearchRequest checks that any tool_search arguments either parse or fail with a
// documented input error, and never run a search when they fail.
func FuzzSearchRequest(f *testing.F) {
	for _, s := range []string{`{"query":"x"}`, `{"queries":[{"query":"a","limit":2}],"query":"b"}`, `{"query":null,"limit":1,"queries":[{"query":"x"}]}`, `{"options":{"limit":3},"query":"q"}`, `[]`} {
		f.Add(s)
	}
	fx := newFixture(f, goldenEntries(), nil, Options{})
	f.Fuzz(func(t *testing.T, args string) {
		p, err := parseValue([]byte(args))
		if err != nil || !p.isObject() {
			return
		}
		req, err := fx.rt.parseSearchRequest(p, DefaultBatchBudget())
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || !errors.Is(err, ErrBadRequest) || ie.Msg == "" {
				t.Fatalf("%s: error %v is not a bad-request InputError", args, err)
			}
			return
		}
		if len(req.batch) > 16 {
			t.Fatalf("%s: %d batch entries passed", args, len(req.batch))
		}
	})
}

// FuzzCallArgs checks that argument repair never panics and always yields JSON input.
func FuzzCallArgs(f *testing.F) {
	for _, s := range []string{`{"id":"issue_create","args":{"a":1}}`, `{"name":"read_file","args.x":1,"y":2}`, `{"id":"a","toolId":"b","name":"c"}`} {
		f.Add(s)
	}
	fx := newFixture(f, goldenEntries(), nil, Options{})
	f.Fuzz(func(t *testing.T, args string) {
		p, err := parseValue([]byte(args))
		if err != nil || !p.isObject() {
			return
		}
		id, input, err := fx.rt.readCallArgs(p)
		if err != nil {
			return
		}
		if strings.TrimSpace(id) == "" || !json.Valid(input) {
			t.Fatalf("%s: id %q input %q", args, id, input)
		}
	})
}

func TestCustomBatchBudget(t *testing.T) {
	snap, _ := catalog.NewSnapshot(1, goldenEntries())
	ix, _ := NewIndex(snap, nil, newWordRanker)
	b := DefaultBatchBudget()
	b.MaxQueries = 2
	rt, _ := New(Config{Index: ix, Pipeline: &dispatch.Pipeline{}, Budget: b})
	res, err := rt.executor(ToolSearch).Execute(context.Background(), catalog.Call{Args: json.RawMessage(`{"queries":[{"query":"a"},{"query":"b"},{"query":"c"}]}`)})
	if err != nil || res.Text() != "queries may contain at most 2 entries." {
		t.Fatalf("%v %q", err, res.Text())
	}
}

// TestCallArgsManyKeys: tool_call arguments with a great many keys, which a model or code can
// send, are refused naming the first ten extra keys and counting the rest, in an answer of a
// line. (The read was quadratic: 100,000 keys held a host core for tens of seconds, outside any
// deadline; a regression shows as this test's time.)
func TestCallArgsManyKeys(t *testing.T) {
	const n = 100000
	var b strings.Builder
	b.WriteString(`{"id":"issue_create","repository":"a/b","title":"x"`)
	for i := range n {
		fmt.Fprintf(&b, `,"k%d":1`, i)
	}
	b.WriteString("}")
	f := newFixture(t, goldenEntries(), nil, Options{})
	res := f.control(t, ToolCall, b.String())
	want := `Invalid arguments for tool "nodmix:core:issue_create": <root>: must not have additional properties: "k0", "k1", `
	more := fmt.Sprintf(`"k9", and %d more.`, n-10)
	if !res.IsError || !strings.HasPrefix(res.Text(), want) || !strings.Contains(res.Text(), more) || len(res.Text()) > 1024 {
		t.Errorf("result (error %v, %d bytes) %.300s, want one starting %s and holding %s", res.IsError, len(res.Text()), res.Text(), want, more)
	}
}

// The tool_search definition states the default budget in words and in its schema, which are
// constants (every request pays for them): they must say what DefaultBatchBudget enforces.
func TestSearchDefinitionStatesTheBudget(t *testing.T) {
	b := DefaultBatchBudget()
	for _, want := range []string{
		fmt.Sprintf("up to %d searches at once (%d results in total)", b.MaxQueries, b.MaxTotalResults),
	} {
		if !strings.Contains(descSearch, want) {
			t.Errorf("description lacks %q: %s", want, descSearch)
		}
	}
	var schema struct {
		Properties struct {
			Queries struct {
				MaxItems int `json:"maxItems"`
				Items    struct {
					Properties struct {
						Query struct {
							MaxLength int `json:"maxLength"`
						} `json:"query"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"queries"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schemaSearch, &schema); err != nil {
		t.Fatal(err)
	}
	q := schema.Properties.Queries
	if q.MaxItems != b.MaxQueries || q.Items.Properties.Query.MaxLength != b.MaxQueryChars {
		t.Errorf("schema says maxItems %d, maxLength %d; the budget %d queries of %d characters",
			q.MaxItems, q.Items.Properties.Query.MaxLength, b.MaxQueries, b.MaxQueryChars)
	}
}

// FuzzGraphemes: a text has at least one cluster and no more than runes, and joining two texts
// of valid UTF-8 can merge at most the clusters that meet at the seam.
func FuzzGraphemes(f *testing.F) {
	for _, s := range []string{"", "a", "\r\n", "👨\u200d👩", "🇫🇷🇩", "\u0600a", "\uAC00\u11A8", "e\u0301\u0903", "\xff\u200d"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		na, nb, n := graphemes(a), graphemes(b), graphemes(a+b)
		if runes := utf8.RuneCountInString(a); (a != "") != (na > 0) || na > runes {
			t.Fatalf("graphemes(%+q) = %d for %d runes", a, na, runes)
		}
		// Bytes of an invalid text can join across the seam into a character of their own.
		if utf8.ValidString(a) && utf8.ValidString(b) && n != na+nb && !(n == na+nb-1 && na > 0 && nb > 0) {
			t.Fatalf("graphemes(%+q) = %d, graphemes(%+q) = %d, joined %d", a, na, b, nb, n)
		}
	})
}
