package search

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodedFacts is what SchemaFacts must equal: the schema decoded into maps, then read.
func decodedFacts(raw []byte) (keys []string, text string, ok bool) {
	var schema any
	if json.Unmarshal(raw, &schema) != nil {
		return nil, "", false
	}
	return SchemaKeys(schema), SchemaText(schema), true
}

type facts struct {
	Keys []string
	Text string
	OK   bool
}

func checkFacts(t *testing.T, raw []byte) {
	t.Helper()
	k, s, ok := decodedFacts(raw)
	want := facts{k, s, ok}
	k, s, ok = SchemaFacts(raw)
	if diff := cmp.Diff(want, facts{k, s, ok}); diff != "" {
		t.Errorf("SchemaFacts(%q) (-decoded +raw):\n%s", raw, diff)
	}
}

func TestSchemaFactsEdgeCases(t *testing.T) {
	for _, raw := range []string{
		``, `null`, `[]`, `"x"`, `{}`, `{"properties":{}}`, `{"properties":[]}`, ` { "properties" : { "b" : {}, "a" : { "description" : "A" } } } `,
		`{"description":"one","description":"two"}`, `{"description":"one","description":3}`,
		`{"properties":{"a":{"description":"x"}},"properties":5}`,
		`{"properties":{"a":{"description":"first"},"a":{"description":"second"},"b":1}}`,
		`{"descr\u0069ption":"esc\u00e9\n","properties":{"k\u00e9y":{}}}`,
		"{\"description\":\"bad \xff utf8\",\"properties\":{\"\xfe\":{}}}",
		`{"items":{"description":"item"},"anyOf":[{"description":"a"},null,{"properties":{"z":{}}}],"oneOf":3,"allOf":[[{"description":"nested array"}]]}`,
		`{"properties":{"a":{"properties":{"b":{"properties":{"c":{"properties":{"d":{"properties":{"e":{"description":"deep"}}}}}}}}}}}`,
		`{"properties":{"":{"description":"empty name"}},"description":""}`,
		`{"a":[1,2,{"b":"}"}],"description":"after \"quoted\" ]}"}`,
		`{"properties":{"x":1}} trailing`, `{"properties":`,
	} {
		checkFacts(t, []byte(raw))
	}
}

// TestSchemaFactsRetrievalSets: every schema of the retrieval sets gives what decoding gives.
func TestSchemaFactsRetrievalSets(t *testing.T) {
	n := 0
	for _, path := range []string{sealtoolsTools, metatoolTools, "testdata/retrieval/livemcpbench/tools.jsonl"} {
		for _, tool := range readTools(t, path) {
			if len(tool.Schema) > 0 {
				checkFacts(t, tool.Schema)
				n++
			}
		}
	}
	if n < 4000 {
		t.Fatalf("only %d schemas checked", n)
	}
}

// TestSchemaReaderAllocations: a reader's Facts allocates the text and the keys' slice, and
// nothing more: the keys are parts of the text, which has their names.
func TestSchemaReaderAllocations(t *testing.T) {
	raw := []byte(`{"type":"object","description":"d","properties":{"city":{"type":"string",` +
		`"description":"the city"},"units":{"enum":["c","f"]},"":{}},"required":["city"]}`)
	var r SchemaReader
	keys, text, _ := r.Facts(raw) // warms the reader's buffers
	if diff := cmp.Diff([]string{"", "city", "units"}, keys); diff != "" {
		t.Fatalf("keys (-want +got):\n%s", diff)
	}
	if text != "d city the city units" {
		t.Fatalf("text = %q", text)
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _, _ = r.Facts(raw) }); allocs != 2 {
		t.Errorf("Facts allocates %v times, want 2", allocs)
	}
}

func FuzzSchemaFacts(f *testing.F) {
	f.Add([]byte(`{"description":"d","properties":{"a":{"description":"x","items":[{"description":"i"}]}}}`))
	f.Add([]byte(`{"properties":{"a":1,"a":{"description":"\u00e9"}},"anyOf":[null]}`))
	f.Fuzz(func(t *testing.T, raw []byte) { checkFacts(t, raw) })
}

// FuzzSchemaScan: the scan SchemaFacts validates with agrees with json.Valid.
func FuzzSchemaScan(f *testing.F) {
	for _, s := range []string{
		``, ` `, `0`, `-0.5e+3`, `01`, `-`, `1.`, `1e`, `.5`, `"\u00e9\/"`, `"\x"`, "\"\x01\"", `"unterminated`,
		`{"a":1,}`, `[1,2]`, `[1 2]`, `{"a" 1}`, `{1:2}`, `tru`, `nulll`, `[]]`, `{}}`, `[{"a":[{}]}]`,
		`{"properties":{"x":{"type":"string","enum":["a",null,true,false,1e400]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p := rawSchema{b: raw}
		if valid, _ := p.scan(); valid != json.Valid(raw) {
			t.Fatalf("scan(%q) valid = %v, json.Valid = %v", raw, valid, !valid)
		}
	})
}

func TestSchemaScanDepth(t *testing.T) {
	for _, n := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		raw := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		p := rawSchema{b: raw}
		if valid, _ := p.scan(); valid != json.Valid(raw) {
			t.Errorf("depth %d: scan valid = %v, json.Valid = %v", n, valid, !valid)
		}
	}
}
