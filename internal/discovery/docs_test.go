package discovery

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// TestDocsOfLargeCatalog: split between goroutines, the documents of a large catalog are the
// ones Doc gives each tool, in catalog order.
func TestDocsOfLargeCatalog(t *testing.T) {
	entries := make([]*catalog.Entry, 5*docsPerWorker+7)
	for i := range entries {
		entries[i] = &catalog.Entry{Tool: catalog.Tool{ID: fmt.Sprintf("mcp:s:t%d", i), Name: fmt.Sprintf("t%d", i),
			Description: fmt.Sprintf("tool number %d", i), InputSchema: json.RawMessage(fmt.Sprintf(`{"properties":{"p%d":{}}}`, i))}}
	}
	got := docsOf(entries)
	for i, e := range entries {
		if diff := cmp.Diff(Doc(&e.Tool), got[i]); diff != "" {
			t.Fatalf("doc %d (-want +got):\n%s", i, diff)
		}
	}
}

// TestDocsAfterReuses: the documents after a catalog change are the ones Doc gives every tool,
// whether a tool was kept, changed, added or removed, and a kept tool's is the one from before.
func TestDocsAfterReuses(t *testing.T) {
	tool := func(i int, desc string) catalog.Tool {
		return catalog.Tool{ID: fmt.Sprintf("mcp:s:t%04d", i), Name: fmt.Sprintf("t%d", i), Description: desc,
			InputSchema: json.RawMessage(fmt.Sprintf(`{"properties":{"p%d":{}}}`, i))}
	}
	var before, after []*catalog.Entry
	for i := range 3000 {
		before = append(before, &catalog.Entry{Tool: tool(i, "before")})
	}
	for i := 5; i < 3100; i++ { // 0–4 removed, 3000–3099 added
		e := &catalog.Entry{Tool: before[min(i, 2999)].Tool}
		switch {
		case i >= 3000:
			e.Tool = tool(i, "added")
		case i%10 == 0:
			e.Tool.Description = "changed"
		case i%10 == 1:
			e.Tool.InputSchema = json.RawMessage(`{"properties":{"other":{}}}`)
		}
		after = append(after, e)
	}
	docs := docsOf(before)
	got := docsAfter(before, docs, after)
	for i, e := range after {
		if diff := cmp.Diff(Doc(&e.Tool), got[i]); diff != "" {
			t.Fatalf("doc %d (-want +got):\n%s", i, diff)
		}
	}
	// Kept tools share their schema keys with the documents from before: nothing was read again.
	if k := got[2]; &k.SchemaKeys[0] != &docs[7].SchemaKeys[0] {
		t.Error("the document of a kept tool was built again")
	}
}
