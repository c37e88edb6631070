package mcphub

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/leaktest"
)

// A tool the SDK cannot read (a name that is a number) failed the whole listing: the server went
// down and all its tools with it, its error quoting Go types. The tool is left out, with why in
// the log and the status, and the server's other tools stay, on every page of the listing.
func TestToolsThatCannotBeReadAreLeftOut(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	t.Cleanup(f.rawWG.Wait)
	pages := map[string]string{
		"": `{"tools":[{"name":"ok","inputSchema":{"type":"object"}},{"name":5},"junk",` +
			`{"name":"bad_desc","description":7,"inputSchema":{"type":"object"}}],"nextCursor":"p2"}`,
		"p2": `{"tools":[{"name":"ann","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"yes"}},` +
			`{"name":"ok2","inputSchema":{"type":"object"}}]}`,
	}
	f.raw["odd"] = func(_ *rawPeer, method string, _, params json.RawMessage) any {
		if method != "tools/list" {
			return nil
		}
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(params, &p)
		return json.RawMessage(pages[p.Cursor])
	}
	log, logs := captureLog(t)
	h, _ := testHub(t, f, Options{Log: log}, enabled("odd"))
	waitState(t, h, "odd", StateReady, StateDown)
	st := statusOf(h, "odd")
	if st.State != StateReady {
		t.Fatalf("state %s (%s), want ready", st.State, st.LastError)
	}
	var got []string
	for _, e := range h.Tools() {
		got = append(got, e.Tool.MCPToolName)
	}
	if diff := cmp.Diff([]string{"ok", "ok2"}, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	want := []string{
		`tools[1]: "name" must be a string`,
		`tools[2]: must be an object`,
		`tools[3] ("bad_desc"): "description" must be a string`,
		`tools[0] ("ann"): "annotations.readOnlyHint" must be a boolean`,
	}
	if diff := cmp.Diff(want, st.ToolsLeftOut); diff != "" {
		t.Errorf("status toolsLeftOut (-want +got):\n%s", diff)
	}
	for _, why := range want {
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), strings.ReplaceAll(why, `"`, `\"`)) {
			t.Errorf("no warning for %s in the log", why)
		}
	}
	if strings.Contains(logs.String(), "Go struct") || strings.Contains(logs.String(), "mcp.Tool") {
		t.Errorf("the log quotes Go types:\n%s", logs)
	}
}

// A tools/call result the SDK cannot read gave the model the SDK's decoder error (Go types in
// it), after a second's wait for a connection that was fine, as a failure of nodmix. The model
// reads a failed tool result that says the server's result is malformed, and why in JSON terms;
// the server stays ready.
func TestMalformedCallResultIsAToolError(t *testing.T) {
	leaktest.Check(t)
	f := newFakeNet()
	t.Cleanup(f.rawWG.Wait)
	results := make(chan string, 1)
	f.raw["x"] = func(_ *rawPeer, method string, _, _ json.RawMessage) any {
		switch method {
		case "tools/list":
			return map[string]any{"tools": json.RawMessage(`[{"name":"t","inputSchema":{"type":"object"}}]`)}
		case "tools/call":
			return json.RawMessage(<-results)
		}
		return nil
	}
	h, _ := testHub(t, f, Options{}, enabled("x"))
	waitState(t, h, "x", StateReady)
	e, ok := findTool(h, catalog.ID(catalog.SourceMCP, "x", "t"))
	if !ok {
		t.Fatal("tool t not listed")
	}
	const prefix = `mcp server "x": tools/call result: `
	for _, tt := range []struct{ result, want string }{
		{`{"content":"notarray","isError":"yes"}`, `"content" must be an array`},
		{`{"content":[],"isError":"yes"}`, `"isError" must be a boolean`},
		{`{"content":[{"type":"text","text":5}]}`, `"content[0].text" must be a string`},
		{`{"content":[{"type":"text","text":"a"},{"type":"image","data":5,"mimeType":"image/png"}]}`, `"content[1].data" must be a base64 string`},
		{`{"content":[null]}`, `every item of "content" must be an object`},
		{`{"content":[{"type":"zzz","text":"a"}]}`, `"content" holds an item of the unknown type "zzz"`},
		{`"x"`, `the result must be an object`},
	} {
		results <- tt.result
		res, err := e.Exec.Execute(context.Background(), catalog.Call{})
		want := &catalog.Result{IsError: true, Content: []catalog.Content{{Type: "text", Text: prefix + tt.want}}}
		if err != nil {
			t.Errorf("%s: error %v, want a tool result %q", tt.result, err, prefix+tt.want)
			continue
		}
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("%s: result (-want +got):\n%s", tt.result, diff)
		}
	}
	if st := statusOf(h, "x"); st.State != StateReady {
		t.Errorf("state %s after malformed results, want ready", st.State)
	}
}

// TestScreenToolsPageReadsAsTheSDK: the screen leaves out only what the SDK cannot read. The
// SDK's decoder matches keys exactly (a "Title" beside a tool's fields is an extra key, which
// MCP allows), and refuses a message nested past 1,000 levels, which would fail the whole listing.
func TestScreenToolsPageReadsAsTheSDK(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 1000) + "1" + strings.Repeat("}", 1000)
	tests := []struct {
		name, tool string
		left       []string
	}{
		{"a key differing from a field by case", `{"name":"a","inputSchema":{"type":"object"},"Title":{"en":"x"},"NAME":5}`, nil},
		{"an extra key", `{"name":"a","inputSchema":{"type":"object"},"x-vendor":[1]}`, nil},
		{"a wrong type under the exact key", `{"name":"a","inputSchema":{"type":"object"},"Title":"t","title":{"en":"x"}}`,
			[]string{`tools[0] ("a"): "title" must be a string`}},
		{"nested past the SDK's limit", `{"name":"a","inputSchema":{"type":"object","x":` + deep + `}}`,
			[]string{`tools[0] ("a"): nests deeper than the 997 levels a tool may hold`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := `{"tools":[` + tt.tool + `]}`
			out, left := screenToolsPage(json.RawMessage(page))
			if diff := cmp.Diff(tt.left, left); diff != "" {
				t.Errorf("left out (-want +got):\n%s", diff)
			}
			if tt.left == nil && string(out) != page {
				t.Errorf("a page with nothing left out came back changed: %s", out)
			}
		})
	}
}

// FuzzScreenToolsPage: any tools/list result is screened without a panic; a page with nothing
// left out comes back byte for byte, and one with tools left out is JSON whose tools all read.
func FuzzScreenToolsPage(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"name":"ok","inputSchema":{"type":"object"}},{"name":5}],"nextCursor":"c"}`,
		`{"tools":"x"}`, `"x"`, `{"tools":[null,1,{"name":"a","annotations":[]}]}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, result []byte) {
		out, left := screenToolsPage(result)
		if left == nil {
			if string(out) != string(result) {
				t.Fatalf("screenToolsPage(%q) = %q with nothing left out", result, out)
			}
			return
		}
		var page struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(out, &page); err != nil {
			t.Fatalf("screenToolsPage(%q) = %q: %v", result, out, err)
		}
		for _, raw := range page.Tools {
			if _, again := screenToolsPage([]byte(`{"tools":[` + string(raw) + `]}`)); again != nil {
				t.Fatalf("screenToolsPage(%q) kept %s, which does not read: %q", result, raw, again)
			}
		}
	})
}
