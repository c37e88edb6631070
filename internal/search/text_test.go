package search

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSchemaKeysAndText(t *testing.T) {
	var schema any
	raw := `{
		"type": "object",
		"description": "Create an issue",
		"properties": {
			"title": {"type": "string", "description": "Issue title"},
			"labels": {"type": "array", "items": {"type": "string", "description": "Label name", "enum": ["bug", "feature"]}},
			"assignee": {"anyOf": [{"type": "string", "description": "Login"}, {"type": "null"}]},
			"meta": {"properties": {"a": {"properties": {"b": {"properties": {"c": {"properties": {"d": {"description": "too deep"}}}}}}}}}
		}
	}`
	if err := json.Unmarshal([]byte(raw), &schema); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"assignee", "labels", "meta", "title"}, SchemaKeys(schema)); diff != "" {
		t.Errorf("SchemaKeys mismatch (-want +got):\n%s", diff)
	}
	// Names are collected by their parent: d is at depth 4, its description beyond.
	want := "Create an issue assignee Login labels Label name meta a b c d title Issue title"
	if got := SchemaText(schema); got != want {
		t.Errorf("SchemaText = %q, want %q", got, want)
	}
	for _, bad := range []any{nil, "x", map[string]any{"properties": []any{}}, map[string]any{}} {
		if keys := SchemaKeys(bad); keys != nil {
			t.Errorf("SchemaKeys(%v) = %v, want nil", bad, keys)
		}
	}
	// A self-referencing value built in memory stays bounded.
	loop := map[string]any{"description": "loop"}
	loop["items"] = loop
	if got := SchemaText(loop); got != "loop loop loop loop loop" {
		t.Errorf("SchemaText(loop) = %q", got)
	}
}

func TestJSTrimAndLower(t *testing.T) {
	if got := jsTrim("\ufeff\t x \u00a0\n"); got != "x" {
		t.Errorf("jsTrim = %q, want x", got)
	}
	if got := jsTrim("\u0085x\u0085"); got != "\u0085x\u0085" {
		t.Errorf("jsTrim kept NEL? got %q", got)
	}
	if got := jsLower("İSTANBUL ΟΔΟΣ"); got != "i\u0307stanbul οδος" {
		t.Errorf("jsLower = %q", got)
	}
}

// Compound words, both ways, in nodmix's ranker.
func TestRankerCompounds(t *testing.T) {
	docs := []RankDoc{
		{ID: "mcp:a:one", Name: "one", Description: "Open an issue on github"},
		{ID: "mcp:b:two", Name: "two", Description: "Open an issue on GitHub"},
		{ID: "mcp:c:three", Name: "three", Description: "Open an issue on git hub"},
		{ID: "mcp:d:four", Name: "four", Description: "Post a message"},
		{ID: "mcp:e:exportchat", Name: "exportchat", Label: "exportchat", Description: "Save a conversation"},
		{ID: "mcp:f:five", Name: "five", Description: "Smart home watch list"},
	}
	r := NewRanker(docs, RankerOptions{})
	for _, q := range []string{"GitHub", "github", "git hub"} {
		got := map[string]bool{}
		for _, h := range r.Search(q, 0, nil) {
			got[docs[h.Index].ID] = true
		}
		for _, id := range []string{"mcp:a:one", "mcp:b:two", "mcp:c:three"} {
			if !got[id] {
				t.Errorf("Search(%q) misses %s; got %v", q, id, got)
			}
		}
		if got["mcp:d:four"] {
			t.Errorf("Search(%q) found the unrelated tool", q)
		}
	}
	// A query word the corpus lacks is split into corpus words.
	hits := r.Search("smartwatch", 1, nil)
	if len(hits) != 1 || docs[hits[0].Index].ID != "mcp:f:five" {
		t.Errorf("Search(smartwatch) = %v, want mcp:f:five", hits)
	}
	// Adjacent query words are joined to meet a compound name.
	hits = r.Search("export chat", 1, nil)
	if len(hits) != 1 || docs[hits[0].Index].ID != "mcp:e:exportchat" {
		t.Errorf("Search(export chat) = %v, want mcp:e:exportchat", hits)
	}
	// The reference misses the joined spelling.
	ref := NewRanker(docs, RankerOptions{Reference: true})
	for _, h := range ref.Search("github", 0, nil) {
		if docs[h.Index].ID == "mcp:c:three" {
			t.Errorf("reference Search(github) found %q; the test no longer shows the difference", docs[h.Index].Description)
		}
	}
}

func TestRankerEmpty(t *testing.T) {
	for _, opts := range []RankerOptions{{Reference: true}, {}} {
		r := NewRanker(nil, opts)
		if r.Len() != 0 {
			t.Errorf("%+v: Len() = %d, want 0", opts, r.Len())
		}
		if hits := r.Search("github issue", 8, nil); hits != nil {
			t.Errorf("%+v: empty ranker returned %v", opts, hits)
		}
	}
}

func TestRankerAllowBeforeLimit(t *testing.T) {
	docs := rankDocs(readTools(t, toolSearchFixture), true)
	for _, opts := range []RankerOptions{{Reference: true}, {}} {
		r := NewRanker(docs, opts)
		all := r.Search("open new issue", 0, nil)
		if len(all) < 2 {
			t.Fatalf("%+v: Search = %v, want at least 2 hits", opts, all)
		}
		denied := all[0].Index
		got := r.Search("open new issue", 1, func(i int) bool { return i != denied })
		if diff := cmp.Diff(all[1:2], got); diff != "" {
			t.Errorf("%+v: filtered Search mismatch (-want +got):\n%s", opts, diff)
		}
	}
}

// Searches share one index from many goroutines; run with -race.
func TestConcurrentSearches(t *testing.T) {
	tools := readTools(t, sealtoolsTools)[:500]
	bm := NewBM25(seedDocs(tools))
	rdocs := rankDocs(tools, true)
	rk := NewRanker(rdocs, RankerOptions{})
	queries := readQueryFile(t, sealtoolsQueries)[:40]
	type result struct {
		bm []Hit
		rk []Hit
	}
	want := make([]result, len(queries))
	for i, q := range queries {
		want[i].bm, _ = bm.Search(q.Query, 5)
		want[i].rk = rk.Search(q.Query, 5, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(queries))
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, q := range queries {
				got, _ := bm.Search(q.Query, 5)
				if !cmp.Equal(want[i].bm, got) {
					errs <- "bm25: " + q.Query
				}
				if !cmp.Equal(want[i].rk, rk.Search(q.Query, 5, nil)) {
					errs <- "ranker: " + q.Query
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent result differs: %s", e)
	}
}
