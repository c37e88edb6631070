package exposure_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/exposure"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		tsOn     bool
		tsMode   string
		disc     discovery.Mode
		codeOK   bool
		want     exposure.Mode
		scenario string
	}{
		{false, "", discovery.Off, true, exposure.Direct, "nothing configured"},
		{false, "", discovery.MCPOnly, true, exposure.Discovery, "discovery on"},
		{false, "", discovery.All, true, exposure.Discovery, "discovery all"},
		{true, "code", discovery.MCPOnly, true, exposure.ToolSearchCode, "Tool Search wins over discovery"},
		{true, "tools", discovery.Off, true, exposure.ToolSearchTools, "tools mode"},
		{true, "code", discovery.Off, false, exposure.ToolSearchTools, "code falls back to tools without a sandbox"},
	}
	for _, tt := range tests {
		if got := exposure.Resolve(tt.tsOn, tt.tsMode, tt.disc, tt.codeOK); got != tt.want {
			t.Errorf("%s: Resolve = %s, want %s", tt.scenario, got, tt.want)
		}
	}
	for _, m := range exposure.Modes {
		if got, err := exposure.ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%s) = %s, %v", m, got, err)
		}
	}
	if _, err := exposure.ParseMode("everything"); err == nil || err.Error() != "mode: must be one of direct, discovery, toolsearch-tools, toolsearch-code" {
		t.Errorf("bad mode error = %v", err)
	}
}

// TestToolSearchRun: in a Tool Search mode a session lists and calls only the control tools, and
// a control tool that shares a name with a catalog tool is an error, not a silent shadowing.
func TestToolSearchRun(t *testing.T) {
	echo := catalog.ExecutorFunc(func(_ context.Context, c catalog.Call) (*catalog.Result, error) {
		return catalog.TextResult(c.Tool.ID), nil
	})
	newEngine := func(catalogName string) *exposure.Engine {
		cat := catalog.New(nil)
		cat.Add(catalog.Static([]catalog.Entry{{Tool: catalog.Tool{ID: "mcp:s:" + catalogName, Name: catalogName, Source: catalog.SourceMCP}, Exec: echo}}))
		e := &exposure.Engine{Catalog: cat, Pipeline: &dispatch.Pipeline{}, Controls: func(_ exposure.Mode, _ *catalog.Snapshot, _ string) []catalog.Entry {
			return []catalog.Entry{{Tool: catalog.Tool{ID: "nodmix:core:tool_call", Name: "tool_call", Source: catalog.SourceBuiltin}, Exec: echo}}
		}}
		e.SetMode(exposure.ToolSearchTools)
		return e
	}
	ctx := context.Background()
	v, err := newEngine("issue_create").Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range v.Tools() {
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff([]string{"tool_call"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if res, err := v.Call(ctx, "tool_call", nil); err != nil || res.Text() != "nodmix:core:tool_call" {
		t.Errorf("tool_call = %v, %v", res, err)
	}
	if _, err := v.Call(ctx, "issue_create", nil); !errors.Is(err, dispatch.ErrUnknownTool) {
		t.Errorf("catalog tool called directly: err = %v, want ErrUnknownTool", err)
	}

	clash, err := newEngine("tool_call").Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	var ce *catalog.CollisionError
	if _, err := clash.Call(ctx, "tool_call", nil); !errors.As(err, &ce) {
		t.Errorf("clashing control tool: err = %v, want a CollisionError", err)
	}
}

// TestSearchWaitsForSources checks that a control tool called by name or by id waits for sources
// that are still starting, and that other calls do not.
func TestSearchWaitsForSources(t *testing.T) {
	echo := catalog.ExecutorFunc(func(_ context.Context, c catalog.Call) (*catalog.Result, error) {
		return catalog.TextResult(c.Tool.ID), nil
	})
	cat := catalog.New(nil)
	cat.Add(catalog.Static([]catalog.Entry{{Tool: catalog.Tool{ID: "mcp:s:x", Name: "x", Source: catalog.SourceMCP}, Exec: echo}}))
	waits := 0
	e := &exposure.Engine{Catalog: cat, Pipeline: &dispatch.Pipeline{}, Ready: func(context.Context) { waits++ },
		Controls: func(_ exposure.Mode, _ *catalog.Snapshot, _ string) []catalog.Entry {
			return []catalog.Entry{{Tool: catalog.Tool{ID: "nodmix:core:tool_call", Name: "tool_call", Source: catalog.SourceBuiltin}, Exec: echo}}
		}}
	e.SetMode(exposure.ToolSearchTools)
	ctx := context.Background()
	v, err := e.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tool_call", "nodmix:core:tool_call", "x"} {
		_, _ = v.Call(ctx, name, nil)
	}
	if waits != 2 {
		t.Errorf("Ready ran %d times, want 2 (tool_call by name and by id, not x)", waits)
	}
}

// TestDefinitionsCutHugeDescriptions: `tools exposure` shows the description a model is sent,
// cut as the agent cuts it.
func TestDefinitionsCutHugeDescriptions(t *testing.T) {
	tool := catalog.Tool{Name: "t", Description: strings.Repeat("x", catalog.MaxModelDescription+1)}
	got := exposure.Definitions([]catalog.Tool{tool})[0].Description
	if want := tool.ModelDescription(); got != want || got == tool.Description {
		t.Errorf("description of %d bytes, want the %d of ModelDescription", len(got), len(want))
	}
}
