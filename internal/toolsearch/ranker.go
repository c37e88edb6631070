package toolsearch

import (
	"bytes"
	"runtime"
	"sync"

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
		rankDocs(tools, docs, opts)
		return &searchRanker{r: search.NewRanker(docs, opts), tools: tools, docs: docs, opts: opts}
	}
}

// minReadTools is the fewest tools worth a goroutine of their own in rankDocs.
const minReadTools = 512

// rankDocs fills docs with the documents of tools, reading their schemas on every CPU, one
// contiguous chunk of tools each.
func rankDocs(tools []*catalog.Tool, docs []search.RankDoc, opts search.RankerOptions) {
	read := func(lo, hi int) {
		var schemas search.SchemaReader
		for i := lo; i < hi; i++ {
			docs[i] = rankDoc(tools[i], !opts.Reference || trusted(tools[i]), &schemas)
		}
	}
	n := min(runtime.GOMAXPROCS(0), len(tools)/minReadTools)
	if n < 2 {
		read(0, len(tools))
		return
	}
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() { read(k*len(tools)/n, (k+1)*len(tools)/n) })
	}
	wg.Wait()
}

// updater is a Ranker that builds the ranker of a changed catalog from itself, redoing only
// the work of tools that changed. IndexCache uses it between catalog versions.
type updater interface {
	update(tools []*catalog.Tool) Ranker
}

var _ updater = (*searchRanker)(nil)

// update reuses the document of every tool whose indexed fields are unchanged, and the search
// ranker's analysis of it.
func (s *searchRanker) update(tools []*catalog.Tool) Ranker {
	// Tools mostly keep their positions: the map of old positions by id is made only for a
	// tool that moved.
	var prev map[string]int
	find := func(i int, id string) (int, bool) {
		if i < len(s.tools) && s.tools[i].ID == id {
			return i, true
		}
		if prev == nil {
			prev = make(map[string]int, len(s.tools))
			for j, t := range s.tools {
				prev[t.ID] = j
			}
		}
		j, ok := prev[id]
		return j, ok
	}
	docs := make([]search.RankDoc, len(tools))
	var schemas search.SchemaReader
	for i, t := range tools {
		if j, ok := find(i, t.ID); ok && sameIndexed(s.tools[j], t) {
			docs[i] = s.docs[j]
		} else {
			docs[i] = rankDoc(t, !s.opts.Reference || trusted(t), &schemas)
		}
	}
	return &searchRanker{r: s.r.Update(docs), tools: tools, docs: docs, opts: s.opts}
}

// sameIndexed reports whether a and b agree on every field rankDoc reads.
func sameIndexed(a, b *catalog.Tool) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Label == b.Label && a.Description == b.Description &&
		a.Source == b.Source && a.Server == b.Server && a.MCPToolName == b.MCPToolName &&
		bytes.Equal(a.InputSchema, b.InputSchema)
}

func rankDoc(t *catalog.Tool, paramText bool, schemas *search.SchemaReader) search.RankDoc {
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
	keys, text, ok := schemas.Facts(t.InputSchema)
	if !ok {
		return d
	}
	d.SchemaKeys = keys
	if paramText {
		d.ParamText = text
	}
	return d
}

// searchRanker is the search package's ranker with what an update needs: the tools and documents
// it was built from.
type searchRanker struct {
	r     *search.Ranker
	tools []*catalog.Tool
	docs  []search.RankDoc
	opts  search.RankerOptions
}

func (s *searchRanker) Search(query string, limit int, allow func(int) bool) []Hit {
	hits := s.r.Search(query, limit, allow)
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{Doc: h.Index, Score: h.Score}
	}
	return out
}
