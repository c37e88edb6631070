package search

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

func TestSplitLead(t *testing.T) {
	tests := []struct {
		name, desc, lead, body string
	}{
		{"empty", "", "", ""},
		{"one sentence", "Open a new issue", "Open a new issue", ""},
		{"one paragraph of sentences", "Get Google Trends. In Japan, you can also get Twitter trends.",
			"Get Google Trends. In Japan, you can also get Twitter trends.", ""},
		{"wrapped paragraph", "Convert an address\nto coordinates.", "Convert an address\nto coordinates.", ""},
		{"blank line", "\nConvert an address.\n\nThis tool takes a text.", "Convert an address.", "\n\nThis tool takes a text."},
		{"blank line of spaces", "  Read a file.\n   \t\n  Prefer this.", "Read a file.", "\n   \t\n  Prefer this."},
		{"crlf", "Read a file.\r\n\r\nPrefer this.", "Read a file.\r", "\n\r\nPrefer this."},
		{"args section", "Makes a move on the board.\nArgs:\n    move: the move", "Makes a move on the board.", "\nArgs:\n    move: the move"},
		{"upper-case heading", "Read output.\n  SMART FEATURES:\n  - Early exit", "Read output.", "\n  SMART FEATURES:\n  - Early exit"},
		{"list after an intro", "Retrieve metadata including:\n  - size\n  - type", "Retrieve metadata including:", "\n  - size\n  - type"},
		{"numbered list", "Steps\n1. load\n2) run", "Steps", "\n1. load\n2) run"},
		{"bullet", "Tools\n• one", "Tools", "\n• one"},
		// Not headings or items: a long line ending in a colon, a colon after a
		// non-letter, a dash without a space, a number without a dot.
		{"long colon line", "Search.\nThe results of this search are listed below as follows:\nx",
			"Search.\nThe results of this search are listed below as follows:\nx", ""},
		{"path colon", "Read.\nC:\\dir:", "Read.\nC:\\dir:", ""},
		{"dash word", "Read.\n-v flag", "Read.\n-v flag", ""},
		{"year", "Born\n1999 was the year", "Born\n1999 was the year", ""},
		{"trailing newline", "Read a file.\n", "Read a file.", "\n"},
		{"cjk", "获取当前日期。\n\n主要用于解析", "获取当前日期。", "\n\n主要用于解析"},
	}
	for _, tt := range tests {
		lead, body := splitLead(tt.desc)
		if diff := cmp.Diff([2]string{tt.lead, tt.body}, [2]string{lead, body}); diff != "" {
			t.Errorf("%s: splitLead(%q) mismatch (-want +got):\n%s", tt.name, tt.desc, diff)
		}
	}
}

// The lead counts more than the rest of a description: of two tools whose long
// descriptions use the same words, the one that says it in its lead ranks first.
func TestRankerDescriptionLead(t *testing.T) {
	docs := []RankDoc{
		{ID: "a", Name: "tool_a", Description: "Move files.\n\nNote: directory paths must be absolute."},
		{ID: "b", Name: "tool_b", Description: "List the entries of one directory with their full paths, sizes and types.\n\nSlow on network file systems."},
		{ID: "c", Name: "tool_c", Description: "Send an email."},
	}
	r := NewRanker(docs, RankerOptions{})
	if got := hitIDs(docs, r.Search("directory paths", 2, nil)); !cmp.Equal(got, []string{"b", "a"}) {
		t.Errorf("Search(directory paths) = %v, want [b a]", got)
	}
}

// An MCP tool ranks the same under its server-prefixed name as under its own.
func TestRankerOwnName(t *testing.T) {
	tests := []struct {
		doc  RankDoc
		want string
	}{
		{RankDoc{Name: "create_issue"}, "create_issue"},
		{RankDoc{Name: "mcp__github__create_issue"}, "create_issue"},
		{RankDoc{Name: "github__create_issue"}, "create_issue"},
		{RankDoc{Name: "mcp__Ant_Design__list-components_1a2b3c4d", ToolName: "list-components"}, "list-components"},
		{RankDoc{Name: "trailing__"}, "trailing__"},
	}
	for _, tt := range tests {
		if got := ownName(&tt.doc); got != tt.want {
			t.Errorf("ownName(%+v) = %q, want %q", tt.doc, got, tt.want)
		}
	}
	catalogs := map[string][]RankDoc{
		"own": {
			{ID: "gh/create_issue", Name: "create_issue", Server: "github", Description: "Create an issue in a repository"},
			{ID: "gh/search_code", Name: "search_code", Server: "github", Description: "Search code in repositories"},
			{ID: "jira/create_ticket", Name: "create_ticket", Server: "jira", Description: "Create a ticket for an issue"},
		},
		"prefixed": {
			{ID: "gh/create_issue", Name: "mcp__github__create_issue", ToolName: "create_issue", Server: "github", Description: "Create an issue in a repository"},
			{ID: "gh/search_code", Name: "mcp__github__search_code", ToolName: "search_code", Server: "github", Description: "Search code in repositories"},
			{ID: "jira/create_ticket", Name: "mcp__atlassian-jira-cloud__create_ticket", ToolName: "create_ticket", Server: "jira", Description: "Create a ticket for an issue"},
		},
	}
	results := map[string][]Hit{}
	for name, docs := range catalogs {
		results[name] = NewRanker(docs, RankerOptions{}).Search("create an issue", 3, nil)
	}
	if diff := cmp.Diff(results["own"], results["prefixed"]); diff != "" {
		t.Errorf("prefixed names rank differently (-own +prefixed):\n%s", diff)
	}
	if len(results["own"]) != 2 || results["own"][0].Index != 0 {
		t.Errorf("Search(create an issue) = %v, want create_issue first of two", results["own"])
	}
}

func FuzzSplitLead(f *testing.F) {
	f.Add("Convert an address.\n\nThis tool takes a text.")
	f.Add("  Read output.\n  SMART FEATURES:\n  - Early exit")
	f.Add("Steps\n1. load\n2) run\n")
	f.Add("获取当前日期。\n\n主要用于解析")
	f.Fuzz(func(t *testing.T, desc string) {
		lead, body := splitLead(desc)
		if got := lead + body; got != strings.TrimLeftFunc(desc, unicode.IsSpace) {
			t.Fatalf("lead+body = %q, want the description without leading space", got)
		}
		if body != "" && !strings.HasPrefix(body, "\n") {
			t.Fatalf("body %q does not start at a line break", body)
		}
		for line := range strings.Lines(lead) {
			if strings.TrimSpace(line) == "" {
				t.Fatalf("lead %q holds a blank line", lead)
			}
		}
		if again, rest := splitLead(lead); again != lead || rest != "" {
			t.Fatalf("the lead %q splits again into %q, %q", lead, again, rest)
		}
	})
}
