package search

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const toolSearchFixture = "testdata/toolsearch-fixture.jsonl"

// rankDoc builds the ranker's document for a catalog entry. paramText says whether the
// schema text is indexed (the reference did so for first-party tools only).
// The label stays empty when the catalog has none, as the reference's entries do.
func rankDoc(tool testTool, paramText bool) RankDoc {
	d := RankDoc{
		ID:          tool.ID,
		Name:        tool.Name,
		Label:       seedDoc(tool).Label, // the name when there is no label, as the catalog does
		Description: tool.Description,
		Server:      tool.Server,
		Source:      tool.Source,
		SchemaKeys:  SchemaKeys(tool.schema),
	}
	if tool.Source == "mcp" {
		d.ToolName = tool.MCPToolName // as the Tool Search runtime builds it
	}
	if paramText {
		d.ParamText = SchemaText(tool.schema)
	}
	return d
}

func rankDocs(tools []testTool, paramText bool) []RankDoc {
	docs := make([]RankDoc, len(tools))
	for i, tool := range tools {
		docs[i] = rankDoc(tool, paramText)
	}
	return docs
}

func hitIDs(docs []RankDoc, hits []Hit) []string {
	ids := []string{}
	for _, h := range hits {
		ids = append(ids, docs[h.Index].ID)
	}
	return ids
}

// The reference's golden rankings over its six-tool catalog. The golden file lists
// only ids; the fixture rebuilds the catalog from the reference's directory listing and
// describe output (ids read nodmix for openclaw).
func TestRankerReferenceGolden(t *testing.T) {
	docs := rankDocs(readTools(t, toolSearchFixture), true)
	var n int
	for _, line := range goldenSections(t, toolSearchGolden)[""] {
		rest, ok := strings.CutPrefix(line, "search ")
		if !ok {
			continue
		}
		q, out, ok := strings.Cut(rest, " => ")
		if !ok {
			t.Fatalf("malformed golden line %q", line)
		}
		var query string
		var want []string
		if err := json.Unmarshal([]byte(q), &query); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(out, "openclaw:", "nodmix:")), &want); err != nil {
			t.Fatal(err)
		}
		n++
		for _, opts := range []RankerOptions{{Reference: true}, {}} {
			r := NewRanker(docs, opts)
			if diff := cmp.Diff(want, hitIDs(docs, r.Search(query, 8, nil))); diff != "" {
				t.Errorf("%+v Search(%q) mismatch (-want +got):\n%s", opts, query, diff)
			}
		}
	}
	if n < 11 {
		t.Fatalf("golden file has %d search vectors, want at least 11", n)
	}
}

func TestRankerExactMatches(t *testing.T) {
	docs := []RankDoc{
		{ID: "nodmix:core:do", Name: "do", Description: "Do the thing"},
		{ID: "mcp:accounting:listURL", Name: "listURL", Description: "List links"},
		{ID: "mcp:accounting:listUrl", Name: "listUrl", Description: "List links"},
		{ID: "mcp:gh:gh__create_issue", Name: "gh__create_issue", Description: "Create an issue"},
		{ID: "mcp:other:create_task", Name: "create_task", Description: "Create a task"},
	}
	tests := []struct {
		opts  RankerOptions
		query string
		limit int
		allow func(int) bool
		want  []string
	}{
		// A stop-word name is found by exact name although no term reaches it.
		{RankerOptions{Reference: true}, "do", 8, nil, []string{"nodmix:core:do"}},
		// The exact id spelling wins alone.
		{RankerOptions{Reference: true}, "mcp:accounting:listURL", 1, nil, []string{"mcp:accounting:listURL"}},
		{RankerOptions{Reference: true}, " mcp:accounting:listUrl ", 1, nil, []string{"mcp:accounting:listUrl"}},
		// Names match case-insensitively: both spellings, then the rest by score.
		{RankerOptions{Reference: true}, "LISTURL", 1, nil, []string{"mcp:accounting:listURL"}},
		// Visibility applies before the limit.
		{RankerOptions{Reference: true}, "listurl", 1, func(i int) bool { return i != 1 }, []string{"mcp:accounting:listUrl"}},
		{RankerOptions{Reference: true}, "do", 8, func(i int) bool { return i != 0 }, []string{}},
		// Stop words only: nothing, never the catalog.
		{RankerOptions{Reference: true}, "the and with", 8, nil, []string{}},
		// nodmix matches the tool part of server__tool names exactly.
		{RankerOptions{}, "create_issue", 1, nil, []string{"mcp:gh:gh__create_issue"}},
		{RankerOptions{Reference: true}, "create_issue", 8, nil, []string{"mcp:gh:gh__create_issue", "mcp:other:create_task"}},
	}
	for _, tt := range tests {
		r := NewRanker(docs, tt.opts)
		got := hitIDs(docs, r.Search(tt.query, tt.limit, tt.allow))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%+v Search(%q, %d) mismatch (-want +got):\n%s", tt.opts, tt.query, tt.limit, diff)
		}
	}
}

func TestReferenceScore(t *testing.T) {
	// The reference's asserted score: "needle needle" in a two-document corpus whose
	// other document is empty: ln2·2·2.2/(2+1.2·1.75).
	docs := []RankDoc{{Description: "needle needle"}, {}}
	hits := NewRanker(docs, RankerOptions{Reference: true}).Search("needle", 8, nil)
	// ln(1+(2-1+0.5)/(1+0.5)) = ln 2; len 2, avg 1: 1.2·(0.25+0.75·2) = 2.1.
	want := 0.6931471805599453 * 2 * 2.2 / (2 + 1.2*1.75)
	if len(hits) != 1 || hits[0].Index != 0 || !closeTo(hits[0].Score, want) {
		t.Fatalf("Search(needle) = %v, want doc 0 scoring %v", hits, want)
	}
}

func closeTo(a, b float64) bool {
	d := a - b
	return d < 1e-12 && d > -1e-12
}

func TestStemmer(t *testing.T) {
	tests := map[string][]string{
		"running":      {"run"},
		"runner":       {"run"},
		"calling":      {"call"},
		"processing":   {"process"},
		"news":         {"news"},
		"scheduling":   {"schedul"},
		"schedule":     {"schedul"},
		"cookies":      {"cooky", "cooki"},
		"cookie":       {"cooki"},
		"policies":     {"policy", "polici"},
		"policy":       {"policy"},
		"repositories": {"repository", "repositori"},
		"reminders":    {"remind"},
		"status":       {"status"},
		"process":      {"process"},
		"buzzing":      {"buzz"},
		"use":          {"use"},
	}
	for word, want := range tests {
		if diff := cmp.Diff(want, appendStemVariants(nil, word)); diff != "" {
			t.Errorf("stem variants of %q mismatch (-want +got):\n%s", word, diff)
		}
	}
	// The asserted equivalences.
	for _, pair := range [][2]string{{"scheduling", "schedule"}, {"cookies", "cookie"}, {"policies", "policy"}} {
		a, b := appendStemVariants(nil, pair[0]), appendStemVariants(nil, pair[1])
		shared := false
		for _, x := range a {
			for _, y := range b {
				shared = shared || x == y
			}
		}
		if !shared {
			t.Errorf("%q (%v) and %q (%v) share no stem", pair[0], a, pair[1], b)
		}
	}
}

func TestSplitWords(t *testing.T) {
	tests := map[string][]string{
		"web_search":      {"web_search", "web", "search"},
		"getURLs":         {"geturls", "get", "urls"},
		"getOAuthToken":   {"getoauthtoken", "get", "o", "auth", "token"},
		"HTTPServer":      {"httpserver", "http", "server"},
		"URLsx":           {"urlsx", "ur", "lsx"},
		"価格を調べて":          {"価格を調べて"},
		"a-b c":           {"a", "b", "c"},
		"ΟΔΟΣ_ΟΔΟΣ":       {"οδος_οδος", "οδος", "οδος"},
		"x86_64":          {"x86_64", "x", "86", "64"},
		"Straße":          {"straße"},
		"GitHub":          {"github", "git", "hub"},
		"mcp__gh__create": {"mcp__gh__create", "mcp", "gh", "create"},
	}
	for in, want := range tests {
		var buf []rune
		if diff := cmp.Diff(want, splitWords(nil, in, &buf)); diff != "" {
			t.Errorf("splitWords(%q) mismatch (-want +got):\n%s", in, diff)
		}
	}
}

func TestReferenceQueryTerms(t *testing.T) {
	got := refQueryTerms("look up the price of reminders")
	want := []weightedTerm{
		{"look", 1}, {"pric", 1}, {"remind", 1},
		{"search", 0.35}, {"web", 0.35}, {"find", 0.35},
		{"schedul", 0.35}, {"automation", 0.35}, {"cron", 0.35},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(weightedTerm{})); diff != "" {
		t.Errorf("refQueryTerms mismatch (-want +got):\n%s", diff)
	}
}
