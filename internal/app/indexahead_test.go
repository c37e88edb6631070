package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/leaktest"
	"github.com/nodmix/nodmix/internal/toolsearch"
)

// awaitIndexed returns once the Tool Search index of the app's current allowed catalog is built.
func awaitIndexed(t *testing.T, a *App) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !a.toolSearch.indexes.Cached(a.Engine.Allowed()) {
		if time.Now().After(deadline) {
			t.Fatal("the index of the current catalog was not built ahead")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestIndexAhead: with IndexAhead, the Tool Search index of the catalog is built without a
// search asking for it, at start-up and again when the catalog changes; Close waits for the
// goroutine that builds it.
func TestIndexAhead(t *testing.T) {
	leaktest.Check(t)
	a, err := New(context.Background(), Options{Getenv: testEnv(t), Tools: fakeTools(300), Mode: exposure.ToolSearchTools, IndexAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	awaitIndexed(t, a)

	before := a.Engine.Allowed()
	extra := fakeTools(301)[300]
	extra.ID, extra.Name = catalog.ID(catalog.SourceMCP, "other", "late_tool"), "mcp__other__late_tool"
	a.Catalog.Add(catalog.Static([]catalog.Entry{{Tool: extra, Exec: noExecutor{}}}))
	if a.Engine.Allowed() == before {
		t.Fatal("adding a source did not change the catalog")
	}
	awaitIndexed(t, a)
}

// TestNoIndexAhead: without IndexAhead (one-shot commands), nothing is indexed until a search
// asks.
func TestNoIndexAhead(t *testing.T) {
	a, err := New(context.Background(), Options{Getenv: testEnv(t), Tools: fakeTools(50), Mode: exposure.ToolSearchTools})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.toolSearch.indexes.Cached(a.Engine.Allowed()) {
		t.Error("an index was built before any search asked for it")
	}
}

// TestIndexAheadDiscovery: in discovery mode the build ahead prepares discovery's index while
// searches run, and closes cleanly.
func TestIndexAheadDiscovery(t *testing.T) {
	leaktest.Check(t)
	a, err := New(context.Background(), Options{Getenv: testEnv(t), Tools: fakeTools(300), Mode: exposure.Discovery, IndexAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for i := range 20 {
		d, err := a.Discovery.Search(context.Background(), a.Engine.Allowed(), "s", "reconcile invoices", 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Tools) != 1 {
			t.Fatalf("search %d found %d tools, want 1", i, len(d.Tools))
		}
		extra := fakeTools(1)[0]
		extra.MCPToolName = fmt.Sprintf("late_tool_%02d", i)
		extra.ID, extra.Name = catalog.ID(catalog.SourceMCP, "late", extra.MCPToolName), "mcp__late__"+extra.MCPToolName
		a.Catalog.Add(catalog.Static([]catalog.Entry{{Tool: extra, Exec: noExecutor{}}}))
	}
	if got, want := a.Engine.Allowed().Len(), 320; got != want {
		t.Errorf("%d tools after the additions, want %d", got, want)
	}
}

// TestIdleSessionsDoNotPinOldIndexes: a session's Tool Search runtime is bound to the index of
// the catalog version it last ran on; once the cache lets that index go, the runtime goes too, so
// sessions left idle across catalog changes do not keep an index per change in memory.
func TestIdleSessionsDoNotPinOldIndexes(t *testing.T) {
	a, err := New(context.Background(), Options{Getenv: testEnv(t), Tools: fakeTools(60), Mode: exposure.ToolSearchTools})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const versions = 12
	for i := range versions {
		if _, err := a.ToolSearch(fmt.Sprintf("idle-%02d", i)); err != nil {
			t.Fatal(err)
		}
		extra := fakeTools(1)[0]
		extra.MCPToolName = fmt.Sprintf("late_tool_%02d", i)
		extra.ID, extra.Name = catalog.ID(catalog.SourceMCP, "late", extra.MCPToolName), "mcp__late__"+extra.MCPToolName
		a.Catalog.Add(catalog.Static([]catalog.Entry{{Tool: extra, Exec: noExecutor{}}}))
	}
	current, err := a.ToolSearch("active")
	if err != nil {
		t.Fatal(err)
	}
	s := &a.toolSearch
	s.mu.Lock()
	defer s.mu.Unlock()
	pinned := map[*toolsearch.Index]bool{}
	for sess, rt := range s.runs {
		if !s.indexes.Holds(rt.Index()) {
			t.Errorf("session %s keeps an index the cache let go of", sess)
		}
		pinned[rt.Index()] = true
	}
	if len(pinned) > 4 || !pinned[current.Index()] {
		t.Errorf("runtimes hold %d indexes (want at most the cache's 4, the current among them)", len(pinned))
	}
	if len(s.runs) != len(s.order) {
		t.Errorf("%d runtimes but %d sessions in order", len(s.runs), len(s.order))
	}
	if len(s.runs) >= versions {
		t.Errorf("all %d sessions kept their runtimes across %d catalog versions", len(s.runs), versions)
	}
}
