package app

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/sandbox"
)

// TestMain lets this test binary serve as the code-mode sandbox child, as nodmix itself does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.ChildArg {
		os.Exit(sandbox.ChildMain(context.Background(), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func testEnv(t *testing.T) func(string) string {
	home := t.TempDir()
	return func(k string) string {
		switch k {
		case "NODMIX_HOME":
			return home
		case "HOME":
			return home
		}
		return ""
	}
}

// fakeTools is the E2E regression's catalog: n plugin-like tools with verbose descriptions.
func fakeTools(n int) []catalog.Tool {
	tools := make([]catalog.Tool, n)
	for i := range tools {
		name := fmt.Sprintf("fake_plugin_tool_%02d", i+1)
		tools[i] = catalog.Tool{
			ID: catalog.ID(catalog.SourceMCP, "fake", name), Name: "mcp__fake__" + name, Source: catalog.SourceMCP,
			Owner: "fake", Server: "fake", MCPToolName: name,
			Description: fmt.Sprintf("Fake plugin tool number %02d for the Tool Search regression. It pretends to reconcile invoices for an imaginary back office, with a long description like real plugin tools have, so that direct exposure pays for every schema and description up front. Pass the marker string you were given.", i+1),
			InputSchema: []byte(`{"type":"object","properties":{"marker":{"type":"string","description":"The marker string to echo back."}},"required":["marker"],"additionalProperties":false}`),
		}
	}
	return tools
}

func TestExposureSizes(t *testing.T) {
	modes := []exposure.Mode{exposure.Direct, exposure.Discovery, exposure.ToolSearchTools, exposure.ToolSearchCode}
	bytes := map[exposure.Mode]map[int]int{}
	for _, n := range []int{36, 500, 5000} {
		for _, m := range modes {
			a, err := New(context.Background(), Options{Getenv: testEnv(t), Tools: fakeTools(n), Mode: m,
				SandboxCommand: []string{os.Args[0], sandbox.ChildArg}})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := exposure.Measure(context.Background(), a.Engine, "s")
			a.Close()
			if err != nil {
				t.Fatal(err)
			}
			if rep.Mode != m {
				t.Fatalf("n=%d: mode %s, want %s", n, rep.Mode, m)
			}
			if bytes[m] == nil {
				bytes[m] = map[int]int{}
			}
			bytes[m][n] = rep.Bytes
		}
		t.Logf("%5d tools: direct %8d B, discovery %6d B, toolsearch-tools %5d B, toolsearch-code %5d B", n,
			bytes[exposure.Direct][n], bytes[exposure.Discovery][n], bytes[exposure.ToolSearchTools][n], bytes[exposure.ToolSearchCode][n])
		if !(bytes[exposure.ToolSearchCode][n] < bytes[exposure.ToolSearchTools][n] && bytes[exposure.ToolSearchTools][n] < bytes[exposure.Direct][n]) {
			t.Errorf("n=%d: surfaces not ordered code < tools < direct: %v", n, bytes)
		}
	}
	// The Tool Search surfaces do not grow with the catalog.
	for _, m := range []exposure.Mode{exposure.ToolSearchTools, exposure.ToolSearchCode} {
		if bytes[m][36] != bytes[m][5000] {
			t.Errorf("%s surface grows with the catalog: %v", m, bytes[m])
		}
	}
}

func TestAutoDiscoverySwitchesOnAbove40Tools(t *testing.T) {
	a, err := New(context.Background(), Options{Getenv: testEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	base := a.Catalog.Snapshot().Len()
	if a.Engine.Mode() != exposure.Direct {
		t.Fatalf("start: mode %s, want direct", a.Engine.Mode())
	}
	tools := fakeTools(41 - base)
	var entries []catalog.Entry
	for _, tool := range tools[:40-base] {
		entries = append(entries, catalog.Entry{Tool: tool, Exec: noExecutor{}})
	}
	a.Catalog.Add(catalog.Static(entries))
	if got := a.Catalog.Snapshot().Len(); got != 40 || a.Engine.Mode() != exposure.Direct {
		t.Fatalf("%d tools: mode %s, want 40 tools and direct", got, a.Engine.Mode())
	}
	notified := make(chan struct{}, 1)
	view, _ := a.Engine.Open(context.Background(), "s")
	cancel := view.Subscribe(func() {
		select {
		case notified <- struct{}{}:
		default:
		}
	})
	defer cancel()
	a.Catalog.Add(catalog.Static([]catalog.Entry{{Tool: tools[40-base], Exec: noExecutor{}}}))
	if got := a.Catalog.Snapshot().Len(); got != 41 || a.Engine.Mode() != exposure.Discovery {
		t.Fatalf("%d tools: mode %s, want 41 tools and discovery", got, a.Engine.Mode())
	}
	select {
	case <-notified:
	default:
		t.Error("views were not told that their tools changed")
	}
	visible := view.Tools()
	for _, tool := range visible {
		if tool.Source == catalog.SourceMCP {
			t.Errorf("MCP tool %s visible in discovery mode", tool.Name)
		}
	}
}
