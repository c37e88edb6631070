package discovery_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/session/sqlite"
)

// persistTools is a catalog in which a search finds exactly one tool of each source.
func persistTools() []catalog.Tool {
	tool := func(src catalog.Source, owner, name, desc string) catalog.Tool {
		t := catalog.Tool{ID: catalog.ID(src, owner, name), Name: name, Description: desc, Source: src, Owner: owner}
		if src == catalog.SourceMCP {
			t.Server, t.MCPToolName = owner, name
		}
		return t
	}
	return []catalog.Tool{
		tool(catalog.SourceBuiltin, "core", "glob", "List files whose paths match a glob pattern."),
		tool(catalog.SourceBuiltin, "core", "webfetch", "Fetch a web page by URL and return its readable text."),
		tool(catalog.SourcePlugin, "tokenjuice", "tokenjuice_raw", "Return the full output of a compacted command by its handle."),
		tool(catalog.SourceMCP, "github", "create_issue", "Open a new issue in a GitHub repository."),
	}
}

// TestActivationsOutliveTheStore: what search_tool_bm25 activates stays active in that
// session after the state database is closed and opened again, as when nodmix restarts,
// whatever the tool's source; built-in and plugin tools are hidden only in mode all,
// which makes them easy to leave out of what is stored. Other sessions still have the
// tool hidden.
func TestActivationsOutliveTheStore(t *testing.T) {
	tests := []struct {
		name, query, want string
	}{
		{"built-in", "fetch web page url", catalog.ID(catalog.SourceBuiltin, "core", "webfetch")},
		{"plugin", "compacted command output handle", catalog.ID(catalog.SourcePlugin, "tokenjuice", "tokenjuice_raw")},
		{"mcp", "github issue repository", catalog.ID(catalog.SourceMCP, "github", "create_issue")},
	}
	ctx := context.Background()
	snap := snapshot(t, persistTools())
	rules := discovery.NewRules(discovery.All, []string{"glob"}, nil, snap)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			st, err := sqlite.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			args, _ := json.Marshal(map[string]any{"query": tc.query, "limit": 1})
			text, d, isErr := call(t, discovery.NewService(rules, st, nil), snap, "s1", string(args))
			if isErr || d == nil {
				t.Fatalf("search_tool_bm25 failed: %s", text)
			}
			var found []string
			for _, m := range d.Tools {
				if e, ok := snap.ByName(m.Name); ok {
					found = append(found, e.Tool.ID)
				}
			}
			if diff := cmp.Diff([]string{tc.want}, found); diff != "" {
				t.Fatalf("the search found (-want +got):\n%s", diff)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}

			st, err = sqlite.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			svc := discovery.NewService(rules, st, nil)
			for _, sess := range []string{"s1", "s2"} {
				visible, corpus, err := svc.Split(ctx, snap, sess)
				if err != nil {
					t.Fatal(err)
				}
				var vis, hid []string
				for _, e := range visible {
					vis = append(vis, e.Tool.ID)
				}
				for _, tool := range corpus {
					hid = append(hid, tool.ID)
				}
				active := sess == "s1"
				if slices.Contains(vis, tc.want) != active || slices.Contains(hid, tc.want) == active {
					t.Errorf("session %s after reopening: visible %v, hidden %v; %s should be active: %v", sess, vis, hid, tc.want, active)
				}
				// The essential tool, never stored, is visible in every session.
				if !slices.Contains(vis, catalog.ID(catalog.SourceBuiltin, "core", "glob")) {
					t.Errorf("session %s: the essential glob is not visible: %v", sess, vis)
				}
			}
		})
	}
}
