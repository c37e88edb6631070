package toolsearch

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestOptionsNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   Options
		want Options
	}{
		{"zero takes defaults", Options{}, Options{Mode: ModeCode, CodeTimeout: 10 * time.Second, SearchDefaultLimit: 8, MaxSearchLimit: 20}},
		{"tools mode kept", Options{Enabled: true, Mode: ModeTools}, Options{Enabled: true, Mode: ModeTools, CodeTimeout: 10 * time.Second, SearchDefaultLimit: 8, MaxSearchLimit: 20}},
		{"unknown mode is code", Options{Mode: "directory"}, Options{Mode: ModeCode, CodeTimeout: 10 * time.Second, SearchDefaultLimit: 8, MaxSearchLimit: 20}},
		// golden: {mode:"code",codeTimeoutMs:999999,maxSearchLimit:500,searchDefaultLimit:0} → {code,60000,8,50}
		{"golden clamps", Options{Mode: ModeCode, CodeTimeout: 999999 * time.Millisecond, MaxSearchLimit: 500, SearchDefaultLimit: 0}, Options{Mode: ModeCode, CodeTimeout: 60 * time.Second, SearchDefaultLimit: 8, MaxSearchLimit: 50}},
		// golden: {maxSearchLimit:3,searchDefaultLimit:9} → {…,3,3}
		{"default capped by max", Options{MaxSearchLimit: 3, SearchDefaultLimit: 9}, Options{Mode: ModeCode, CodeTimeout: 10 * time.Second, SearchDefaultLimit: 3, MaxSearchLimit: 3}},
		{"short timeout raised", Options{CodeTimeout: 10 * time.Millisecond}, Options{Mode: ModeCode, CodeTimeout: time.Second, SearchDefaultLimit: 8, MaxSearchLimit: 20}},
		{"negative falls back before clamping", Options{CodeTimeout: -1, MaxSearchLimit: -4, SearchDefaultLimit: -1}, Options{Mode: ModeCode, CodeTimeout: 10 * time.Second, SearchDefaultLimit: 8, MaxSearchLimit: 20}},
	}
	for _, tt := range tests {
		if got := tt.in.Normalize(); got != tt.want {
			t.Errorf("%s: Normalize(%+v) = %+v, want %+v", tt.name, tt.in, got, tt.want)
		}
		if got := tt.want.Normalize(); got != tt.want {
			t.Errorf("%s: Normalize is not idempotent: %+v", tt.name, got)
		}
	}
}

func hintOf(t *testing.T, schema string) string {
	t.Helper()
	v, err := parseValue([]byte(schema))
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	return compactInputHint(v)
}

func TestCompactInputHint(t *testing.T) {
	manyProps := func(n int) string {
		var parts []string
		for i := range n {
			parts = append(parts, fmt.Sprintf(`"p%02d":{"type":"string"}`, i))
		}
		return `{"type":"object","properties":{` + strings.Join(parts, ",") + `}}`
	}
	tests := []struct {
		name, schema, want string
	}{
		{"golden", issueSchema, `{ repository: string; title: string; mode?: "drip" | "flood" }`},
		{"required first, each group sorted", `{"type":"object","properties":{"b":{"type":"string"},"z":{"type":"string"},"a":{"type":"boolean"},"y":{"type":"null"}},"required":["z","y"]}`,
			`{ y: null; z: string; a?: boolean; b?: string }`},
		{"numeric bounds", `{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":20},"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1.5},"c":{"type":"number"}}}`,
			`{ c?: number; n?: number /* integer, >= 1, <= 20 */; x?: number /* > 0, < 1.5 */ }`},
		{"array", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"any":{"type":"array"}}}`,
			`{ any?: Array<unknown>; tags?: Array<string> }`},
		{"nullable", `{"type":"object","properties":{"s":{"type":"string","nullable":true}}}`, `{ s?: string | null }`},
		{"type union", `{"type":"object","properties":{"s":{"type":["string","integer"]}}}`, `{ s?: string | number /* integer */ }`},
		{"anyOf consts", `{"type":"object","properties":{"m":{"anyOf":[{"const":"a"},{"const":1},{"const":null}]}}}`, `{ m?: "a" | 1 | null }`},
		{"oneOf shapes", `{"type":"object","properties":{"m":{"oneOf":[{"type":"string"},{"type":"object","properties":{"x":{"type":"number"}},"additionalProperties":false}]}}}`, `{ m?: string | { x?: number } }`},
		{"oneOf with an open shape is unknown", `{"type":"object","properties":{"m":{"oneOf":[{"type":"string"},{"type":"object","properties":{"x":{"type":"number"}}}]}}}`, `{ m?: unknown }`},
		{"anyOf with oneOf is unknown", `{"type":"object","properties":{"m":{"anyOf":[{"type":"string"}],"oneOf":[{"type":"string"}]}}}`, `{ m?: unknown }`},
		{"nested object", `{"type":"object","properties":{"o":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"],"additionalProperties":false}}}`, `{ o?: { k: string } }`},
		{"closed empty object", `{"type":"object","properties":{"o":{"type":"object","additionalProperties":false}}}`, `{ o?: {} }`},
		{"open empty object", `{"type":"object","properties":{"o":{"type":"object"}}}`, `{ o?: { ... } }`},
		{"top-level without properties", `{"type":"object"}`, `{ ... }`},
		{"top-level closed", `{"type":"object","properties":{},"additionalProperties":false}`, `{}`},
		{"additional properties allowed", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`, `{ a?: string; ... }`},
		{"quoted names", `{"type":"object","properties":{"a-b":{"type":"string"},"$ok":{"type":"string"}}}`, `{ $ok?: string; "a-b"?: string }`},
		{"empty schema property", `{"type":"object","properties":{"v":{}}}`, `{ v?: unknown }`},
		{"depth limit", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{"type":"object","properties":{"d":{"type":"object","properties":{"e":{"type":"string"}}}}}}}}}}}`,
			`{ a?: { b?: { c?: { d?: { e?: unknown } } } } }`},
		{"enum too long falls back to type", `{"type":"object","properties":{"e":{"type":"string","enum":["a","b","c","d","e","f","g","h","i"]}}}`, `{ e?: string }`},
		{"unsupported keyword still renders", `{"type":"object","properties":{"r":{"$ref":"#/x","type":"string"}}}`, `{ r?: string }`},
		{"sixteen properties", manyProps(16), `{ p00?: string; p01?: string; p02?: string; p03?: string; p04?: string; p05?: string; p06?: string; p07?: string; p08?: string; p09?: string; p10?: string; p11?: string; p12?: string; p13?: string; p14?: string; p15?: string }`},
		{"over budget ends with ...", manyProps(17), `{ p00?: string; p01?: string; p02?: string; p03?: string; p04?: string; p05?: string; p06?: string; p07?: string; p08?: string; p09?: string; p10?: string; p11?: string; p12?: string; p13?: string; p14?: string; p15?: string; ... }`},
		{"non-object schema", `{"type":"string"}`, `string`},
		{"not an object at all", `[1,2]`, `unknown`},
		{"missing required property", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","gone"]}`, `{ a: string; ... }`},
	}
	for _, tt := range tests {
		if got := hintOf(t, tt.schema); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestCompactInputHintBudget(t *testing.T) {
	long := strings.Repeat("x", 120)
	schema := fmt.Sprintf(`{"type":"object","properties":{"%s1":{"type":"string"},"%s2":{"type":"string"},"%s3":{"type":"string"}}}`, long, long, long)
	got := hintOf(t, schema)
	want := "{ " + long + "1?: string; " + long + "2?: string; ... }"
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if n := utf16Len(got); n > hintMaxChars {
		t.Fatalf("hint is %d chars, over %d", n, hintMaxChars)
	}
	// A single part over the whole budget leaves nothing renderable.
	huge := strings.Repeat("y", 127)
	one := fmt.Sprintf(`{"type":"object","properties":{"outer_property_name_":{"type":"object","properties":{"%sa":{"type":"string"},"%sb":{"type":"string"},"%sc":{"type":"string"}}}}}`, huge, huge, huge)
	if got := hintOf(t, one); got != "{ ... }" {
		t.Fatalf("oversized nested hint = %s", got)
	}
}

// FuzzCompactInputHint checks that any schema yields a hint within budget, without panicking.
func FuzzCompactInputHint(f *testing.F) {
	for _, s := range []string{issueSchema, `{"type":"object"}`, `{"type":["string","null"]}`, `{"anyOf":[{"const":1},{"const":"x"}]}`, `{"type":"array","items":{"type":"array","items":{}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		v, err := parseValue([]byte(schema))
		if err != nil {
			return
		}
		h := compactInputHint(v)
		if h == "" || (h != hintUnknown && utf16Len(h) > hintMaxChars) {
			t.Fatalf("hint %q for %s", h, schema)
		}
	})
}
