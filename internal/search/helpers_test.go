package search

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nodmix/nodmix/internal/catalog"
)

const (
	benchDir           = "../../testdata/bench/retrieval/"
	ompFixturePath     = "../../testdata/reference/golden/omp-bm25-fixture.jsonl"
	toolSearchGolden   = "../../testdata/reference/golden/toolsearch-golden.txt"
	sealtoolsTools     = benchDir + "sealtools/tools.jsonl"
	sealtoolsQueries   = benchDir + "sealtools/queries_dev.jsonl"
	metatoolTools      = benchDir + "metatool/tools.jsonl"
	metatoolQueries    = benchDir + "metatool/queries_dev.jsonl"
	seedSummaryUnits   = 200
	defaultToolsSource = "mcp"
)

// testTool is one line of a catalog file (DESIGN §8). The real loader lives with the
// catalog; this one reads just enough for the tests.
type testTool struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Label       string          `json:"label"`
	Description string          `json:"description"`
	Summary     string          `json:"summary"`
	Source      string          `json:"source"`
	Server      string          `json:"server"`
	MCPToolName string          `json:"mcp_tool_name"`
	Schema      json.RawMessage `json:"input_schema"`

	schema    any      // decoded input_schema
	propOrder []string // top-level property names in file order
}

// toolCache keeps each catalog file parsed once per test binary; callers must treat
// the tools as read-only.
var toolCache sync.Map // path → []testTool

func readTools(t testing.TB, path string) []testTool {
	t.Helper()
	if tools, ok := toolCache.Load(path); ok {
		return tools.([]testTool)
	}
	tools := parseTools(t, path)
	toolCache.Store(path, tools)
	return tools
}

func parseTools(t testing.TB, path string) []testTool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tools []testTool
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var tool testTool
		if err := json.Unmarshal(sc.Bytes(), &tool); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		if tool.Source == "" {
			tool.Source = defaultToolsSource
		}
		if len(tool.Schema) > 0 {
			if err := json.Unmarshal(tool.Schema, &tool.schema); err != nil {
				t.Fatalf("%s:%d: input_schema: %v", path, line, err)
			}
			tool.propOrder = propertyOrder(t, tool.Schema)
		}
		tools = append(tools, tool)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tools
}

// propertyOrder lists the top-level input_schema property names as the file orders
// them (the seed's fixture does not sort them).
func propertyOrder(t testing.TB, raw json.RawMessage) []string {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil
	}
	props, ok := top["properties"]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(props))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// seedDoc builds the seed's discoverable-tool document for an MCP catalog entry: the
// seed's MCP tools carry no label, so it is the name; the summary is the first 200
// UTF-16 units of the description; schema keys are sorted.
func seedDoc(tool testTool) Doc {
	label := tool.Label // as catalog.Tool.DisplayLabel: the name when there is no label
	if label == "" {
		label = tool.Name
	}
	summary := tool.Summary
	if summary == "" {
		summary = catalog.PrefixUTF16(tool.Description, seedSummaryUnits)
	}
	return Doc{
		Name:        tool.Name,
		Label:       label,
		ServerName:  tool.Server,
		MCPToolName: tool.MCPToolName,
		Summary:     summary,
		SchemaKeys:  SchemaKeys(tool.schema),
	}
}

func seedDocs(tools []testTool) []Doc {
	docs := make([]Doc, len(tools))
	for i, tool := range tools {
		docs[i] = seedDoc(tool)
	}
	return docs
}

func readQueryFile(t testing.TB, path string) []Query {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := ReadQueries(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return qs
}

// refBM25 is the seed's BM25+ written the straightforward way, as the seed wrote it:
// a term-frequency map per document and a scan of every document per query. It shares
// only the tokenizer with the package (verified on its own).
type refBM25 struct {
	docs []refBM25Doc
	avg  float64
	df   map[string]int
}

type refBM25Doc struct {
	name   string
	tf     map[string]int
	length int
}

func newRefBM25(docs []Doc) *refBM25 {
	r := &refBM25{df: map[string]int{}}
	total := 0
	for _, d := range docs {
		doc := refBM25Doc{name: d.Name, tf: map[string]int{}}
		add := func(s string, w int) {
			if s == "" {
				return
			}
			for _, tok := range Tokenize(s) {
				doc.tf[tok] += w
				doc.length += w
			}
		}
		add(d.Name, 6)
		add(d.Label, 4)
		add(d.ServerName, 2)
		add(d.MCPToolName, 4)
		add(d.Summary, 2)
		for _, k := range d.SchemaKeys {
			add(k, 1)
		}
		for tok := range doc.tf {
			r.df[tok]++
		}
		total += doc.length
		r.docs = append(r.docs, doc)
	}
	r.avg = float64(total) / float64(len(docs))
	if r.avg == 0 || r.avg != r.avg {
		r.avg = 1
	}
	return r
}

func (r *refBM25) search(query string, limit int) ([]Hit, error) {
	tokens := Tokenize(query)
	if len(tokens) == 0 {
		return nil, ErrNoTokens
	}
	var order []string
	counts := map[string]int{}
	for _, tok := range tokens {
		if counts[tok] == 0 {
			order = append(order, tok)
		}
		counts[tok]++
	}
	k1, b, delta := 1.2, 0.75, 1.0
	var hits []Hit
	for i, d := range r.docs {
		score := 0.0
		for _, tok := range order {
			tf := float64(d.tf[tok])
			if tf == 0 {
				continue
			}
			df := float64(r.df[tok])
			idf := math.Log(1 + (float64(len(r.docs))-df+0.5)/(df+0.5))
			norm := k1 * (1 - b + float64(b*(float64(d.length)/r.avg)))
			score += float64(float64(counts[tok]) * idf * ((tf*(k1+1))/(tf+norm) + delta))
		}
		if score > 0 {
			hits = append(hits, Hit{Index: i, Score: score})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool {
		if hits[a].Score != hits[b].Score {
			return hits[a].Score > hits[b].Score
		}
		return r.docs[hits[a].Index].name < r.docs[hits[b].Index].name
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

func fmtHits(hits []Hit, names func(int) string) string {
	parts := make([]string, len(hits))
	for i, h := range hits {
		parts[i] = fmt.Sprintf("%s %.6f", names(h.Index), h.Score)
	}
	return strings.Join(parts, ", ")
}

// workerDocs is the Seal-Tools seed documents repeated, each copy renamed (and its summary
// changed too with summaries), until there are enough for four workers.
func workerDocs(t testing.TB, summaries bool) []Doc {
	base := seedDocs(readTools(t, sealtoolsTools))
	var docs []Doc
	for copyN := 0; len(docs) < 4*minDocsPerWorker+100; copyN++ {
		for _, d := range base {
			if copyN > 0 {
				d.Name += "V" + strconv.Itoa(copyN)
				if summaries {
					d.Summary += " copy " + strconv.Itoa(copyN)
				}
			}
			docs = append(docs, d)
		}
	}
	return docs
}
