package app

import (
	"encoding/json"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/search"
	"github.com/nodmix/nodmix/internal/toolsearch"
)

// RankDoc is the Tool Search ranker's document of a tool. nodmix indexes the schema's text
// (property names and descriptions) of every tool; reference mode keeps the reference's rule of
// indexing parameter text of first-party (nodmix) tools only.
func RankDoc(t *catalog.Tool, reference bool) search.RankDoc {
	d := search.RankDoc{
		ID:          t.ID,
		Name:        t.Name,
		Label:       t.Label,
		Description: t.Description,
		Server:      t.Server,
		Source:      string(t.Source),
		SchemaKeys:  t.SchemaKeys(),
	}
	firstParty := t.Source == catalog.SourceBuiltin || t.Source == catalog.SourcePlugin
	if len(t.InputSchema) > 0 && (!reference || firstParty) {
		var schema any
		if json.Unmarshal(t.InputSchema, &schema) == nil {
			d.ParamText = search.SchemaText(schema)
		}
	}
	return d
}

// NewRanker builds the Tool Search ranker over tools (reference selects the reference algorithm).
func NewRanker(tools []*catalog.Tool, reference bool) *search.Ranker {
	docs := make([]search.RankDoc, len(tools))
	for i, t := range tools {
		docs[i] = RankDoc(t, reference)
	}
	return search.NewRanker(docs, search.RankerOptions{Reference: reference})
}

// rankerAdapter serves toolsearch with the search package's ranker.
type rankerAdapter struct{ r *search.Ranker }

func (a rankerAdapter) Search(query string, limit int, allow func(int) bool) []toolsearch.Hit {
	hits := a.r.Search(query, limit, allow)
	out := make([]toolsearch.Hit, len(hits))
	for i, h := range hits {
		out[i] = toolsearch.Hit{Doc: h.Index, Score: h.Score}
	}
	return out
}

// toolSearchRanker is the RankerFactory of the live catalog.
func toolSearchRanker(tools []*catalog.Tool) toolsearch.Ranker {
	return rankerAdapter{NewRanker(tools, false)}
}
