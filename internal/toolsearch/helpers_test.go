package toolsearch

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// wordRanker is a deliberately simple ranker for tests of everything around ranking: a document
// scores one point per query word found among its name, id and description words.
type wordRanker struct {
	docs [][]string
	ids  []string
}

var wordRE = regexp.MustCompile(`[a-z0-9]+`)

var testStopWords = map[string]bool{"the": true, "and": true, "with": true, "a": true, "do": true, "to": true}

func words(s string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(strings.ToLower(s), -1) {
		if !testStopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

func newWordRanker(tools []*catalog.Tool) Ranker {
	r := &wordRanker{}
	for _, t := range tools {
		r.docs = append(r.docs, words(t.Name+" "+t.ID+" "+t.Description))
		r.ids = append(r.ids, t.ID)
	}
	return r
}

func (r *wordRanker) Search(query string, limit int, allow func(int) bool) []Hit {
	q := words(query)
	var hits []Hit
	for i, d := range r.docs {
		if allow != nil && !allow(i) {
			continue
		}
		score := 0
		for _, w := range q {
			if slices.Contains(d, w) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, Hit{Doc: i, Score: float64(score)})
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(r.ids[a.Doc], r.ids[b.Doc])
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// echoExec is the golden catalog's executor: "ok <name>" and details {name, input}.
var echoExec = catalog.ExecutorFunc(func(_ context.Context, c catalog.Call) (*catalog.Result, error) {
	details, _ := json.Marshal(struct {
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}{c.Tool.Name, c.Args})
	res := catalog.TextResult("ok " + c.Tool.Name)
	res.Structured = details
	return res, nil
})

const issueSchema = `{"type":"object","properties":{"repository":{"type":"string","description":"Target repository"},"title":{"type":"string"},"mode":{"type":"string","enum":["drip","flood"]}},"required":["repository","title"],"additionalProperties":false}`

func builtin(name, desc, schema string) catalog.Entry {
	t := catalog.Tool{ID: catalog.ID(catalog.SourceBuiltin, "core", name), Name: name, Description: desc, Source: catalog.SourceBuiltin, Owner: "core"}
	if schema != "" {
		t.InputSchema = json.RawMessage(schema)
	}
	return catalog.Entry{Tool: t, Exec: echoExec}
}

func mcpTool(server, name, desc, schema string) catalog.Entry {
	t := catalog.Tool{
		ID: catalog.ID(catalog.SourceMCP, server, name), Name: catalog.MCPName(server, name), Description: desc,
		Source: catalog.SourceMCP, Owner: server, Server: server, MCPToolName: name,
	}
	if schema != "" {
		t.InputSchema = json.RawMessage(schema)
	}
	return catalog.Entry{Tool: t, Exec: echoExec}
}

// goldenEntries is the catalog of the reference's golden run.
func goldenEntries() []catalog.Entry {
	return []catalog.Entry{
		builtin("cron_create", "Schedule a recurring task", `{"type":"object","properties":{"schedule":{"type":"string"}},"required":["schedule"]}`),
		builtin("getURLs", "List URLs of a page", `{"type":"object","properties":{"page":{"type":"string"}}}`),
		builtin("issue_create", "Open a new issue", issueSchema),
		builtin("read_file", "Read a file from disk", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		builtin("spreadsheet_open", "Open a spreadsheet document", `{"type":"object","properties":{"file":{"type":"string"}}}`),
		builtin("web_search", "Search the web for current information", `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
	}
}

type fixture struct {
	snap *catalog.Snapshot
	ix   *Index
	rt   *Runtime
	pipe *dispatch.Pipeline
}

func newFixture(t testing.TB, entries []catalog.Entry, policy dispatch.Policy, opts Options) *fixture {
	t.Helper()
	snap, err := catalog.NewSnapshot(1, entries)
	if err != nil {
		t.Fatal(err)
	}
	pipe := &dispatch.Pipeline{Policy: policy}
	ix, err := NewIndex(snap, policy, newWordRanker)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(Config{Index: ix, Pipeline: pipe, Options: opts, Session: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{snap: snap, ix: ix, rt: rt, pipe: pipe}
}

// control calls a control tool of the run the way a surface does, through the pipeline.
func (f *fixture) control(t testing.TB, name, args string) *catalog.Result {
	t.Helper()
	ctrl := f.rt.ControlTools(ModeTools)
	if name == ToolSearchCode {
		ctrl = f.rt.ControlTools(ModeCode)
	}
	run, err := f.snap.With(ctrl)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&dispatch.Pipeline{}).Call(context.Background(), run, dispatch.Request{Target: name, Args: json.RawMessage(args), Session: "test", Surface: "test"})
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

var spaceRE = regexp.MustCompile(`\n\s*`)

// collapse turns pretty JSON into the one-line form the golden files use.
func collapse(s string) string { return spaceRE.ReplaceAllString(s, " ") }

// nodmixify reads the reference's "openclaw" as "nodmix".
func nodmixify(s string) string { return strings.ReplaceAll(s, "openclaw", "nodmix") }
