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
