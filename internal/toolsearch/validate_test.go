package toolsearch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateMessages(t *testing.T) {
	const id = "nodmix:core:t"
	tests := []struct {
		name, schema, args, want string
	}{
		{"valid", issueSchema, `{"repository":"a/b","title":"t","mode":"drip"}`, ""},
		{"wrong type", issueSchema, `{"repository":1,"title":"t"}`,
			`Invalid arguments for tool "nodmix:core:t": repository: must be string. Expected input: { repository: string; title: string; mode?: "drip" | "flood" }.`},
		{"enum", issueSchema, `{"repository":"r","title":"t","mode":"storm"}`,
			`Invalid arguments for tool "nodmix:core:t": mode: must be equal to one of the allowed values (allowed: "drip", "flood"). Expected input: { repository: string; title: string; mode?: "drip" | "flood" }.`},
		{"several errors, required first", issueSchema, `{"mode":"drip","titel":"x","extra":true}`,
			`Invalid arguments for tool "nodmix:core:t": repository: must have required property 'repository'; title: must have required property 'title'; <root>: must not have additional properties: "titel", "extra". Did you mean: title? Expected input: { repository: string; title: string; mode?: "drip" | "flood" }.`},
		{"not an object", issueSchema, `[1]`,
			`Invalid arguments for tool "nodmix:core:t": <root>: must be object. Expected input: { repository: string; title: string; mode?: "drip" | "flood" }.`},
		{"bounds", `{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":5},"x":{"type":"number","exclusiveMaximum":1}}}`, `{"n":0,"x":1}`,
			`Invalid arguments for tool "nodmix:core:t": n: must be >= 1; x: must be < 1. Expected input: { n?: number /* integer, >= 1, <= 5 */; x?: number /* < 1 */ }.`},
		{"integer", `{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":1.5}`,
			`Invalid arguments for tool "nodmix:core:t": n: must be integer. Expected input: { n?: number /* integer */ }.`},
		{"integer written as float", `{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":2.0}`, ""},
		{"lengths and items", `{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3},"a":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","maxLength":1}}}}`,
			`{"s":"é","a":["ab","c","d"]}`,
			`Invalid arguments for tool "nodmix:core:t": s: must NOT have fewer than 2 characters; a: must NOT have more than 2 items; a.0: must NOT have more than 1 characters. Expected input: { a?: Array<string>; s?: string }.`},
		{"nested path", `{"type":"object","properties":{"o":{"type":"object","properties":{"k":{"type":"string"}},"required":["k","j"]}}}`, `{"o":{"k":true}}`,
			`Invalid arguments for tool "nodmix:core:t": o.j: must have required property 'j'; o.k: must be string. Expected input: { o?: { k: string; ... } }.`},
		{"nullable", `{"type":"object","properties":{"s":{"type":"string","nullable":true}}}`, `{"s":null}`, ""},
		{"additionalProperties schema", `{"type":"object","properties":{},"additionalProperties":{"type":"number"}}`, `{"a":1,"b":"x"}`,
			`Invalid arguments for tool "nodmix:core:t": b: must be number. Expected input: { ... }.`},
		{"anyOf", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`, `{"v":true}`,
			`Invalid arguments for tool "nodmix:core:t": v: must match a schema in anyOf. Expected input: { v?: string | number }.`},
		{"const", `{"type":"object","properties":{"v":{"const":"x"}}}`, `{"v":"y"}`,
			`Invalid arguments for tool "nodmix:core:t": v: must be equal to constant (allowed: "x"). Expected input: { v?: "x" }.`},
		{"unknown keywords ignored", `{"type":"object","properties":{"v":{"type":"string","pattern":"^x$","format":"uri"}}}`, `{"v":"y"}`, ""},
		{"no schema properties", `{"type":"object"}`, `{"anything":1}`, ""},
	}
	for _, tt := range tests {
		schema, err := parseValue([]byte(tt.schema))
		if err != nil {
			t.Fatal(err)
		}
		args, err := parseValue([]byte(tt.args))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if errs := validateValue(schema, args); len(errs) > 0 {
			got = inputError(id, schema, args, errs)
		}
		if got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestDidYouMeanThreshold(t *testing.T) {
	schema, _ := parseValue([]byte(`{"type":"object","properties":{"ab":{},"query":{}},"additionalProperties":false}`))
	tests := []struct{ args, want string }{
		// one-character key: threshold 1
		{`{"b":1}`, `Invalid arguments for tool "x": <root>: must not have additional properties: "b". Did you mean: ab?`},
		// "qury" (4): threshold 2, distance 1
		{`{"qury":1}`, `Invalid arguments for tool "x": <root>: must not have additional properties: "qury". Did you mean: query?`},
		// too far
		{`{"zzzzz":1}`, `Invalid arguments for tool "x": <root>: must not have additional properties: "zzzzz".`},
	}
	for _, tt := range tests {
		args, _ := parseValue([]byte(tt.args))
		got := inputError("x", schema, args, validateValue(schema, args))
		// The hint is "{ ab?: unknown; query?: unknown }"; compare the part before it.
		if want := tt.want + " Expected input: { ab?: unknown; query?: unknown }."; got != want {
			t.Errorf("%s:\n got %s\nwant %s", tt.args, got, want)
		}
	}
}

// TestManyStrayKeys: a call of many keys the schema does not have gets an error that names the
// first ten and counts the rest, and suggestions for those ten only.
func TestManyStrayKeys(t *testing.T) {
	schema, _ := parseValue([]byte(`{"type":"object","properties":{"query":{}},"additionalProperties":false}`))
	var args, named []string
	for i := range 30 {
		args = append(args, fmt.Sprintf(`"k%02d":1`, i))
		if i < 10 {
			named = append(named, fmt.Sprintf(`"k%02d"`, i))
		}
	}
	args = append(args, `"qury":1`) // past the ten: not suggested
	v, _ := parseValue([]byte("{" + strings.Join(args, ",") + "}"))
	got := inputError("x", schema, v, validateValue(schema, v))
	want := `Invalid arguments for tool "x": <root>: must not have additional properties: ` + strings.Join(named, ", ") +
		`, and 21 more. Expected input: { query?: unknown }.`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// FuzzParseValue checks the ordered parser against encoding/json: it accepts exactly the valid
// documents (within its depth bound) and re-encodes them to the same value.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{issueSchema, `{"a":1,"a":2}`, `[1,"x",null,true,{"k":[]}]`, `"\u2028<&>"`, `1e400`, `{"a":`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := parseValue([]byte(doc))
		valid := json.Valid([]byte(doc))
		if err != nil {
			if valid && err != errTooDeep {
				t.Fatalf("parseValue rejected valid JSON %q: %v", doc, err)
			}
			return
		}
		if !valid {
			t.Fatalf("parseValue accepted invalid JSON %q", doc)
		}
		want, got := decodeNumbers(t, []byte(doc)), decodeNumbers(t, v.marshal())
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip of %q:\n%s", doc, cmp.Diff(want, got))
		}
	})
}

func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

// FuzzValidate checks that validation of any arguments against any schema never panics and
// that every error renders.
func FuzzValidate(f *testing.F) {
	f.Add(issueSchema, `{"repositry":"a","title":1}`)
	f.Add(`{"type":"array","items":{"type":"object","required":["a"]},"maxItems":1}`, `[{},{"a":1}]`)
	f.Add(`{"anyOf":[{"enum":[1,2]},{"const":{"a":[1]}}]}`, `{"a":[1.0]}`)
	f.Fuzz(func(t *testing.T, schemaDoc, argsDoc string) {
		schema, err := parseValue([]byte(schemaDoc))
		if err != nil {
			return
		}
		args, err := parseValue([]byte(argsDoc))
		if err != nil {
			return
		}
		errs := validateValue(schema, args)
		if len(errs) > maxSchemaErrors {
			t.Fatalf("%d errors, over the cap", len(errs))
		}
		if len(errs) > 0 && inputError("x", schema, args, errs) == "" {
			t.Fatal("empty message")
		}
	})
}
