package mcphub

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pages serves the tools as pages of the given sizes, with a nil entry in each page of more than
// one, as a server's listing decodes when it lists null.
func pages(tools []*mcp.Tool, sizes ...int) func(context.Context, string) ([]*mcp.Tool, string, error) {
	return func(_ context.Context, cursor string) ([]*mcp.Tool, string, error) {
		i := 0
		if cursor != "" {
			fmt.Sscan(cursor, &i)
		}
		start := 0
		for _, n := range sizes[:i] {
			start += n
		}
		page := append([]*mcp.Tool(nil), tools[start:start+sizes[i]]...)
		if len(page) > 1 {
			page = append(page[:1], append([]*mcp.Tool{nil}, page[1:]...)...)
		}
		next := ""
		if i+1 < len(sizes) {
			next = fmt.Sprint(i + 1)
		}
		return page, next, nil
	}
}

func listedTools(n int) []*mcp.Tool {
	tools := make([]*mcp.Tool, n)
	for i := range tools {
		tools[i] = &mcp.Tool{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: "Finds <things> & more in the repository, the way grep would.",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "What to look for."},
				"limit": map[string]any{"type": "integer", "minimum": 1.0, "maximum": 100.0},
			}, "required": []any{"query"}},
		}
	}
	return tools
}

// The manifest saved from the listing's own encoding (made while it was listed) is the one
// encoded from its tools, byte for byte: pages, empty pages and null entries alike.
func TestManifestFromListingJSONIsTheSame(t *testing.T) {
	cfg := ServerConfig{Name: "srv", Command: "srv"}
	now := time.Unix(1700000000, 0)
	for _, sizes := range [][]int{{0}, {1}, {3}, {2, 0, 3}, {0, 0}, {5, 1}} {
		total := 0
		for _, n := range sizes {
			total += n
		}
		var encoded []byte
		tools, err := paginate(t.Context(), maxListingBytes, &encoded, pages(listedTools(total), sizes...))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(toolsJSON(tools)), string(encoded)); total > 0 && diff != "" {
			t.Errorf("pages %v: listing JSON (-toolsJSON +joined):\n%s", sizes, diff)
		}
		want, err1 := encodeManifest(cfg, tools, now)
		got, err2 := encodeManifestJSON(cfg, encoded, now)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("pages %v: manifest (-encoded from tools +from the listing's JSON):\n%s", sizes, diff)
		}
	}
}

// BenchmarkManifestOfListing: what saving a listing of 2,000 tools costs after it was listed.
// "reencode" is how it was saved before (the tools encoded for the comparison, then again in the
// manifest); "listed" uses the encoding paginate made of the pages it had to encode anyway.
func BenchmarkManifestOfListing(b *testing.B) {
	cfg := ServerConfig{Name: "srv", Command: "srv"}
	now := time.Unix(1700000000, 0)
	tools := listedTools(2000)
	var encoded []byte
	if _, err := paginate(context.Background(), maxListingBytes, &encoded, pages(tools, 1000, 1000)); err != nil {
		b.Fatal(err)
	}
	b.Run("reencode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = toolsJSON(tools)
			if _, err := encodeManifest(cfg, tools, now); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("listed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeManifestJSON(cfg, json.RawMessage(encoded), now); err != nil {
				b.Fatal(err)
			}
		}
	})
}
