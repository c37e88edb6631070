package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/discovery"
)

func TestRenderDiscovery(t *testing.T) {
	var matches []discovery.Match
	for i := range 6 {
		matches = append(matches, discovery.Match{
			Name: fmt.Sprintf("mcp__srv__tool_%d", i), Label: fmt.Sprintf("srv/tool\t%d", i), ServerName: "srv",
			Description: "does\tthings", Score: 1.23456789,
		})
	}
	d := &discovery.Details{Query: "search_tool_bm25 things", Limit: 8, TotalTools: 9, Tools: matches,
		ActivatedTools: []string{"x"}, ActiveSelectedTools: []string{"a", "b", "c", "d", "e", "f"}}
	var b strings.Builder
	renderDiscovery(&b, d)
	out := b.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if got := lines[1]; got != "6 matches · 6 active · 9 total · limit:8" {
		t.Errorf("status line = %q", got)
	}
	if got := lines[len(lines)-1]; got != "  1 more tool" {
		t.Errorf("last line = %q, want the collapsed count", got)
	}
	if strings.Count(out, "srv/tool") != 5 {
		t.Errorf("want 5 collapsed matches:\n%s", out)
	}
	if strings.Contains(out, "\t") {
		t.Error("tabs are not sanitised")
	}
	if !strings.Contains(out, "srv/tool   0  (srv)  1.235") {
		t.Errorf("match line with label, server and 3-decimal score missing:\n%s", out)
	}
	// The query is the user's text; the renderer's own words never name the wire tool.
	d.Query = "files"
	b.Reset()
	renderDiscovery(&b, d)
	if strings.Contains(b.String(), "search_tool_bm25") {
		t.Error("renderer mentions the wire name")
	}
}

func TestRenderEmpty(t *testing.T) {
	tests := []struct {
		total int
		want  string
	}{
		{0, "No discoverable tools are currently loaded."},
		{3, "No matching tools found."},
	}
	for _, tt := range tests {
		var b strings.Builder
		renderDiscovery(&b, &discovery.Details{Query: "x", Limit: 8, TotalTools: tt.total})
		if !strings.Contains(b.String(), tt.want) {
			t.Errorf("total %d: %q lacks %q", tt.total, b.String(), tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"this is too long", 10, "this is t…"},
		{"東京東京東京", 6, "東京…"}, // wide characters take two columns
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, truncate(tt.in, tt.n)); diff != "" {
			t.Errorf("truncate(%q, %d) (-want +got):\n%s", tt.in, tt.n, diff)
		}
	}
}

func TestSanitizeStream(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text\n\twith a tab\n", "plain text\n\twith a tab\n"},
		{"A\x1b]0;title\x07B", "A ]0;title B"},
		{"clear\x1b[2J", "clear [2J"},
		{"CRLF\r\nline", "CRLF\nline"},
		{"over\rwrite", "overwrite"},
		{"C1 \u009b31m and DEL \x7f", "C1  31m and DEL  "},
		{"NUL\x00", "NUL "},
		{"émoji 👍 and 中文", "émoji 👍 and 中文"},
	}
	for _, tt := range tests {
		if got := sanitizeStream(tt.in); got != tt.want {
			t.Errorf("sanitizeStream(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
