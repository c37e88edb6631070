package toolsearch

import (
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/search"
)

// maxIndexedSchema bounds the schema bytes walked for index text; larger schemas are indexed by
// their other fields only, so one oversized schema cannot slow an index build down.
const maxIndexedSchema = 256 << 10

// SearchRanker returns the factory of the search package's Tool Search ranker. With
// opts.Reference it indexes parameter text of nodmix tools only, as the reference does; otherwise
// it indexes the schema text of every tool, which is what lets nodmix's ranker find tools by
// their parameters. (Indexed text never reaches the model, so untrusted schemas are safe here.)
func SearchRanker(opts search.RankerOptions) RankerFactory {
	return func(tools []*catalog.Tool) Ranker {
		docs := make([]search.RankDoc, len(tools))
		for i, t := range tools {
			docs[i] = rankDoc(t, !opts.Reference || trusted(t))
		}
		return searchRanker{search.NewRanker(docs, opts)}
	}
}

func rankDoc(t *catalog.Tool, paramText bool) search.RankDoc {
	d := search.RankDoc{
		ID:          t.ID,
		Name:        t.Name,
		Label:       t.DisplayLabel(),
		Description: t.Description,
		Server:      t.Server,
		Source:      sourceOf(t),
	}
	if t.Source == catalog.SourceMCP {
		d.ToolName = t.MCPToolName // mcp__server__tool is indexed by its tool name
	}
	if len(t.InputSchema) == 0 || len(t.InputSchema) > maxIndexedSchema {
		return d
	}
	keys, text, ok := search.SchemaFacts(t.InputSchema)
	if !ok {
		return d
	}
	d.SchemaKeys = keys
	if paramText {
		d.ParamText = text
	}
	return d
}

type searchRanker struct{ r *search.Ranker }

func (s searchRanker) Search(query string, limit int, allow func(int) bool) []Hit {
	hits := s.r.Search(query, limit, allow)
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{Doc: h.Index, Score: h.Score}
	}
	return out
}
