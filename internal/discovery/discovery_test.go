package discovery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/session"
)

// fixture is the reference's 4-tool catalog file: three MCP tools and the built-in find.
func fixture(t *testing.T) []catalog.Tool {
	t.Helper()
	f, err := os.Open("../../testdata/reference/golden/omp-bm25-fixture.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tools, err := catalog.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func snapshot(t *testing.T, tools []catalog.Tool) *catalog.Snapshot {
	t.Helper()
	entries := make([]catalog.Entry, len(tools))
	for i, tool := range tools {
		entries[i] = catalog.Entry{Tool: tool, Exec: catalog.ExecutorFunc(func(context.Context, catalog.Call) (*catalog.Result, error) {
			return catalog.TextResult("ok"), nil
		})}
	}
	s, err := catalog.NewSnapshot(1, entries)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call runs search_tool_bm25 as a model would and returns its text and details.
func call(t *testing.T, svc *discovery.Service, snap *catalog.Snapshot, sess, args string) (string, *discovery.Details, bool) {
	t.Helper()
	e := svc.Tool(func() *catalog.Snapshot { return snap })
	res, err := e.Exec.Execute(context.Background(), catalog.Call{Tool: &e.Tool, Args: json.RawMessage(args), Session: sess})
	if err != nil {
		t.Fatal(err)
	}
	var d *discovery.Details
	if len(res.Structured) > 0 {
		d = new(discovery.Details)
		if err := json.Unmarshal(res.Structured, d); err != nil {
			t.Fatal(err)
		}
	}
	return res.Text(), d, res.IsError
}

func everything(snap *catalog.Snapshot) discovery.Rules {
	return discovery.Rules{Mode: discovery.All, Everything: true}
}

func TestGoldenSearchVectors(t *testing.T) {
	snap := snapshot(t, fixture(t))
	type hit struct {
		Name  string
		Score float64
	}
	tests := []struct {
		query string
		want  []hit
	}{
		{"github", []hit{{"mcp__github_create_issue", 2.061918}, {"mcp__github_list_pull_requests", 2.050743}}},
		{"github issue", []hit{{"mcp__github_create_issue", 5.705861}, {"mcp__github_list_pull_requests", 2.050743}}},
		{"slack message", []hit{{"mcp__slack_post_message", 7.288942}}},
		{"find files", []hit{{"find", 6.893846}}},
		{"repo", []hit{{"mcp__github_create_issue", 1.336848}, {"mcp__github_list_pull_requests", 1.308274}}},
		{"pull request", []hit{{"mcp__github_list_pull_requests", 3.628582}}},
		{"create", []hit{{"mcp__github_create_issue", 3.643944}}},
		{"Post", []hit{{"mcp__slack_post_message", 3.657266}}},
		{"GitHub GitHub", []hit{{"mcp__github_create_issue", 11.105576}}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			// A fresh session each time: nothing activated, all four tools hidden.
			svc := discovery.NewService(everything(snap), session.NewMemory(), nil)
			d, err := svc.Search(context.Background(), snap, "s", tt.query, 8)
			if err != nil {
				t.Fatal(err)
			}
			var got []hit
			for _, m := range d.Tools {
				got = append(got, hit{m.Name, m.Score})
			}
			// "GitHub GitHub" matches both github tools; the golden lists the first only for the
			// doubled score: compare the prefix the golden gives.
			if len(got) > len(tt.want) {
				got = got[:len(tt.want)]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	snap := snapshot(t, fixture(t))
	svc := discovery.NewService(everything(snap), session.NewMemory(), nil)
	tests := []struct{ args, want string }{
		{`{"query":"   "}`, "Query is required and must not be empty."},
		{`{}`, "Query is required and must not be empty."},
		{`{"query":"github","limit":0}`, "Limit must be a positive integer."},
		{`{"query":"github","limit":-1}`, "Limit must be a positive integer."},
		{`{"query":"github","limit":1.5}`, "Limit must be a positive integer."},
		{`{"query":"github","limit":"3"}`, "Limit must be a positive integer."},
		{`{"query":"!!!"}`, "Query must contain at least one letter or number."},
	}
	for _, tt := range tests {
		text, _, isErr := call(t, svc, snap, "s", tt.args)
		if !isErr || text != tt.want {
			t.Errorf("%s: got %q (error %v), want error %q", tt.args, text, isErr, tt.want)
		}
	}
	off := discovery.NewService(discovery.Rules{Mode: discovery.Off}, session.NewMemory(), nil)
	text, _, isErr := call(t, off, snap, "s", `{"query":"github"}`)
	want := "Tool discovery is disabled. Enable tools.discoveryMode or mcp.discoveryMode to use search_tool_bm25."
	if !isErr || text != want {
		t.Errorf("disabled: got %q, want %q", text, want)
	}
}

// mcpOnly is the reference test's setting: the three MCP tools hidden, find (a built-in) visible.
func mcpOnly(t *testing.T) (*discovery.Service, *catalog.Snapshot) {
	snap := snapshot(t, fixture(t))
	rules := discovery.NewRules(discovery.MCPOnly, nil, nil, snap)
	return discovery.NewService(rules, session.NewMemory(), nil), snap
}

func TestContentIsTheFourKeyJSON(t *testing.T) {
	svc, snap := mcpOnly(t)
	text, d, isErr := call(t, svc, snap, "s", `{"query":"github"}`)
	if isErr {
		t.Fatal(text)
	}
	want := `{"query":"github","activated_tools":["mcp__github_create_issue","mcp__github_list_pull_requests"],"match_count":2,"total_tools":3}`
	if text != want {
		t.Errorf("content:\n got %s\nwant %s", text, want)
	}
	if diff := cmp.Diff([]string{"mcp__github_create_issue", "mcp__github_list_pull_requests"}, d.ActiveSelectedTools); diff != "" {
		t.Errorf("active_selected_tools (-want +got):\n%s", diff)
	}
	if d.Tools[0].Label != "github/create_issue" || d.Tools[0].ServerName != "github" || d.Tools[0].MCPToolName != "create_issue" {
		t.Errorf("match fields = %+v", d.Tools[0])
	}
	if diff := cmp.Diff([]string{"body", "owner", "repo", "title"}, d.Tools[0].SchemaKeys); diff != "" {
		t.Errorf("schema_keys (-want +got):\n%s", diff)
	}
}

func TestRepeatedSearchWalksDownTheRanking(t *testing.T) {
	svc, snap := mcpOnly(t)
	var got [][]string
	for range 3 {
		_, d, isErr := call(t, svc, snap, "s", `{"query":"github","limit":1}`)
		if isErr {
			t.Fatal("error")
		}
		got = append(got, d.ActivatedTools)
	}
	want := [][]string{{"mcp__github_create_issue"}, {"mcp__github_list_pull_requests"}, {}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSearchesAccumulate(t *testing.T) {
	svc, snap := mcpOnly(t)
	call(t, svc, snap, "s", `{"query":"github issue","limit":1}`)
	_, d, _ := call(t, svc, snap, "s", `{"query":"slack message","limit":1}`)
	want := []string{"mcp__github_create_issue", "mcp__slack_post_message"}
	if diff := cmp.Diff(want, d.ActiveSelectedTools); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	vis, err := svc.Visible(context.Background(), snap, "s")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range vis {
		names = append(names, e.Tool.Name)
	}
	if diff := cmp.Diff([]string{"find", "mcp__github_create_issue", "mcp__slack_post_message"}, names); diff != "" {
		t.Errorf("visible (-want +got):\n%s", diff)
	}
	// Another session has activated nothing.
	other, _ := svc.Visible(context.Background(), snap, "other")
	if len(other) != 1 {
		t.Errorf("other session sees %d tools, want 1", len(other))
	}
}

func TestDefaultLimit(t *testing.T) {
	var tools []catalog.Tool
	for i := range 10 {
		name := fmt.Sprintf("mcp__svc__op%02d", i)
		tools = append(tools, catalog.Tool{ID: name, Name: name, Source: catalog.SourceMCP, Server: "svc", Description: "widget operation"})
	}
	snap := snapshot(t, tools)
	svc := discovery.NewService(discovery.NewRules(discovery.MCPOnly, nil, nil, snap), session.NewMemory(), nil)
	_, d, _ := call(t, svc, snap, "a", `{"query":"widget"}`)
	if len(d.ActivatedTools) != 8 || len(d.ActiveSelectedTools) != 8 {
		t.Errorf("default limit: activated %d, active %d, want 8 and 8", len(d.ActivatedTools), len(d.ActiveSelectedTools))
	}
	_, d, _ = call(t, svc, snap, "b", `{"query":"widget","limit":3}`)
	if len(d.ActivatedTools) != 3 {
		t.Errorf("limit 3: activated %d", len(d.ActivatedTools))
	}
}

func TestDescription(t *testing.T) {
	svc, snap := mcpOnly(t)
	d := svc.Describe(context.Background(), snap, "s")
	for _, want := range []string{
		"Discoverable MCP servers in this session: github (2 tools), slack (1 tool).",
		"Total discoverable tools available: 3.",
		"limit of 5–10", "label", "mcp_tool_name", "schema_keys", "activated_tools", "match_count",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q", want)
		}
	}
	for _, not := range []string{"active_selected_tools", "- tools:"} {
		if strings.Contains(d, not) {
			t.Errorf("description mentions %q", not)
		}
	}
}

func TestEffectiveMode(t *testing.T) {
	tests := []struct {
		mode  discovery.Mode
		mcp   bool
		count int
		want  discovery.Mode
	}{
		{discovery.All, false, 0, discovery.All},
		{discovery.MCPOnly, false, 0, discovery.MCPOnly},
		{discovery.Off, true, 0, discovery.MCPOnly},
		{discovery.Off, false, 100, discovery.Off},
		{discovery.Auto, false, 40, discovery.Off},
		{discovery.Auto, false, 41, discovery.MCPOnly},
	}
	for _, tt := range tests {
		if got := discovery.Effective(tt.mode, tt.mcp, tt.count); got != tt.want {
			t.Errorf("Effective(%s, %v, %d) = %s, want %s", tt.mode, tt.mcp, tt.count, got, tt.want)
		}
	}
}

func TestGenericRoundTrip(t *testing.T) {
	tools := []catalog.Tool{
		{ID: "nodmix:core:find", Name: "find", Source: catalog.SourceBuiltin, Description: "Find files matching a glob pattern"},
		{ID: "mcp:gh:search", Name: "mcp__gh_search", Source: catalog.SourceMCP, Server: "gh", Description: "Search GitHub repositories"},
		{ID: "nodmix:core:read", Name: "read", Source: catalog.SourceBuiltin, Description: "Read a file"},
	}
	snap := snapshot(t, tools)
	svc := discovery.NewService(discovery.NewRules(discovery.All, nil, nil, snap), session.NewMemory(), nil)
	for q, want := range map[string]string{"find files": "find", "github search": "mcp__gh_search"} {
		d, err := svc.Search(context.Background(), snap, "fresh-"+q, q, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Tools) != 1 || d.Tools[0].Name != want {
			t.Errorf("%q: got %+v, want %s", q, d.Tools, want)
		}
	}
	// read is essential in mode all: never hidden, so never in the corpus.
	corpus, _ := svc.Corpus(context.Background(), snap, "x")
	for _, c := range corpus {
		if c.Name == "read" {
			t.Error("essential tool read is in the corpus")
		}
	}
}

// Once a session has activated every hidden tool its corpus is empty: a search finds nothing,
// rather than the visible tools (built-ins, tools activated before), which it would activate
// again and count as matches of a corpus of none.
func TestSearchOfEmptyCorpusFindsNothing(t *testing.T) {
	svc, snap := mcpOnly(t)
	_, d, isErr := call(t, svc, snap, "s", `{"query":"github slack","limit":8}`)
	if isErr || len(d.ActivatedTools) != 3 {
		t.Fatalf("activating every hidden tool: %+v", d)
	}
	type result struct {
		Text      string
		Activated []string
		Active    []string
		Total     int
	}
	var got []result
	for _, q := range []string{"find files", "github issue"} {
		text, d, isErr := call(t, svc, snap, "s", fmt.Sprintf(`{"query":%q}`, q))
		if isErr {
			t.Fatalf("search %q: %s", q, text)
		}
		got = append(got, result{text, d.ActivatedTools, d.ActiveSelectedTools, d.TotalTools})
	}
	active := []string{"mcp__slack_post_message", "mcp__github_create_issue", "mcp__github_list_pull_requests"} // in activation order
	want := []result{
		{`{"query":"find files","activated_tools":[],"match_count":0,"total_tools":0}`, []string{}, active, 0},
		{`{"query":"github issue","activated_tools":[],"match_count":0,"total_tools":0}`, []string{}, active, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// And in a catalog where nothing is hidden at all.
	svc = discovery.NewService(discovery.NewRules(discovery.MCPOnly, nil, []string{"github", "slack"}, snap), session.NewMemory(), nil)
	text, d, _ := call(t, svc, snap, "t", `{"query":"find files"}`)
	if want := `{"query":"find files","activated_tools":[],"match_count":0,"total_tools":0}`; text != want || len(d.ActiveSelectedTools) != 0 {
		t.Errorf("nothing hidden: %s, active %v; want %s and none active", text, d.ActiveSelectedTools, want)
	}
}

// The override and the default servers are read as the reference reads them: each name
// trimmed, empty ones skipped, and an override left with no names keeps the default set.
func TestRulesTrimTheirLists(t *testing.T) {
	snap := snapshot(t, []catalog.Tool{
		{ID: "nodmix:core:read", Name: "read", Source: catalog.SourceBuiltin},
		{ID: "nodmix:core:bash", Name: "bash", Source: catalog.SourceBuiltin},
		{ID: "nodmix:core:find", Name: "find", Source: catalog.SourceBuiltin},
		{ID: "mcp:github:create_issue", Name: "mcp__github_create_issue", Source: catalog.SourceMCP, Server: "github"},
		{ID: "mcp:slack:post_message", Name: "mcp__slack_post_message", Source: catalog.SourceMCP, Server: "slack"},
	})
	tests := []struct {
		name              string
		override, servers []string
		hidden            []string
	}{
		{"defaults", nil, nil, []string{"find", "mcp__github_create_issue", "mcp__slack_post_message"}},
		{"blank override keeps the defaults", []string{"", "  "}, nil, []string{"find", "mcp__github_create_issue", "mcp__slack_post_message"}},
		{"override names trimmed", []string{" find "}, nil, []string{"read", "bash", "mcp__github_create_issue", "mcp__slack_post_message"}},
		{"servers trimmed", nil, []string{" github", ""}, []string{"find", "mcp__slack_post_message"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := discovery.NewRules(discovery.All, tc.override, tc.servers, snap)
			var hidden []string
			for _, e := range snap.Entries() {
				if r.Hidden(&e.Tool) {
					hidden = append(hidden, e.Tool.Name)
				}
			}
			less := func(a, b string) bool { return a < b }
			if diff := cmp.Diff(tc.hidden, hidden, cmpopts.SortSlices(less)); diff != "" {
				t.Errorf("hidden (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLimit(t *testing.T) {
	type result struct {
		N   int
		Err error
	}
	tests := map[string]result{
		"":       {discovery.DefaultLimit, nil},
		"null":   {discovery.DefaultLimit, nil},
		"3":      {3, nil},
		"5.0":    {5, nil},
		"1e12":   {math.MaxInt32, nil}, // a positive integer: no bound beyond the corpus
		"0":      {0, discovery.ErrBadLimit},
		"-1":     {0, discovery.ErrBadLimit},
		"1.5":    {0, discovery.ErrBadLimit},
		`"5"`:    {0, discovery.ErrBadLimit},
		"1e400":  {0, discovery.ErrBadLimit},
		"[1]":    {0, discovery.ErrBadLimit},
		"-1e-30": {0, discovery.ErrBadLimit},
	}
	for in, want := range tests {
		n, err := discovery.ParseLimit(json.RawMessage(in))
		if diff := cmp.Diff(want, result{n, err}, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("ParseLimit(%s) (-want +got):\n%s", in, diff)
		}
	}
}
