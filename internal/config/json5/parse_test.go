package json5

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The example from the JSON5 specification's front page.
const specExample = `{
  // comments
  unquoted: 'and you can quote me on that',
  singleQuotes: 'I can use "double quotes" here',
  lineBreaks: "Look, Mom! \
No \\n's!",
  hexadecimal: 0xdecaf,
  leadingDecimalPoint: .8675309, andTrailing: 8675309.,
  positiveSign: +1,
  trailingComma: 'in objects', andIn: ['arrays',],
  "backwardsCompatible": "with JSON",
}`

func TestParseValues(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want any
	}{
		{"spec example", specExample, map[string]any{
			"unquoted":            "and you can quote me on that",
			"singleQuotes":        `I can use "double quotes" here`,
			"lineBreaks":          `Look, Mom! No \n's!`,
			"hexadecimal":         float64(0xdecaf),
			"leadingDecimalPoint": .8675309,
			"andTrailing":         8675309.0,
			"positiveSign":        1.0,
			"trailingComma":       "in objects",
			"andIn":               []any{"arrays"},
			"backwardsCompatible": "with JSON",
		}},
		{"null", "null", nil},
		{"true", " true ", true},
		{"false", "/* c */false// c", false},
		{"integer", "42", 42.0},
		{"negative", "-0.5e-3", -0.0005},
		{"plus exponent", "1E+2", 100.0},
		{"trailing point exponent", "1.e2", 100.0},
		{"leading point", "-.5", -0.5},
		{"hex upper", "0XFF", 255.0},
		{"hex negative", "-0x10", -16.0},
		{"hex plus", "+0xa", 10.0},
		{"hex beyond uint64", "0x1" + strings.Repeat("0", 20), math.Pow(16, 20)},
		{"zero", "0", 0.0},
		{"double string escapes", `"\b\f\n\r\t\v\0\"\\\/"`, "\b\f\n\r\t\v\x00\"\\/"},
		{"single string escapes", `'\'"'`, `'"`},
		{"any character escapes itself", `"\a\q\é"`, "aqé"},
		{"hex escape", `"\x41\x7e"`, "A~"},
		{"unicode escape", `"\u00e9\u4e2D"`, "é中"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"lone high surrogate", `"\ud83d!"`, "\ufffd!"},
		{"lone low surrogate", `"\ude00"`, "\ufffd"},
		{"high surrogate then non-low escape", `"\ud83d\u0041"`, "\ufffdA"},
		{"line continuation LF", "'a\\\nb'", "ab"},
		{"line continuation CRLF", "'a\\\r\nb'", "ab"},
		{"line continuation CR", "'a\\\rb'", "ab"},
		{"line continuation U+2028", "'a\\\u2028b'", "ab"},
		{"unescaped U+2028 allowed", "'a\u2028b'", "a\u2028b"},
		{"tab allowed in string", "'a\tb'", "a\tb"},
		{"invalid UTF-8 in string", "\"a\xffb\"", "a\ufffdb"},
		{"Infinity", "Infinity", math.Inf(1)},
		{"-Infinity", "-Infinity", math.Inf(-1)},
		{"+Infinity", "+Infinity", math.Inf(1)},
		{"huge decimal is Infinity", "1e400", math.Inf(1)},
		{"unquoted keys", "{$a: 1, _b: 2, c3: 3, ünï: 4, \\u0061b: 5}", map[string]any{"$a": 1.0, "_b": 2.0, "c3": 3.0, "ünï": 4.0, "ab": 5.0}},
		{"reserved words as keys", "{null: 1, true: 2, if: 3}", map[string]any{"null": 1.0, "true": 2.0, "if": 3.0}},
		{"duplicate key: last wins", `{a: 1, a: 2}`, map[string]any{"a": 2.0}},
		{"empty containers", `{a: {}, b: [], c: [[]]}`, map[string]any{"a": map[string]any{}, "b": []any{}, "c": []any{[]any{}}}},
		{"unicode whitespace", "\ufeff{\u00a0a\u2003:\u20281\u2029}", map[string]any{"a": 1.0}},
		{"vertical tab and form feed", "\v\f[1,\v2]", []any{1.0, 2.0}},
		{"comments everywhere", "/*a*/{/*b*/k/*c*/:/*d*/1/*e*/,/*f*/}/*g*/", map[string]any{"k": 1.0}},
		{"line comment at end of input", "1 // no newline", 1.0},
		{"stars in block comment", "/** x **/ 1", 1.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, n.Interface()); diff != "" {
				t.Errorf("value mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseNaN(t *testing.T) {
	for _, in := range []string{"NaN", "-NaN", "+NaN"} {
		n, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if n.Kind != Number || !math.IsNaN(n.Num) {
			t.Errorf("Parse(%q) = %v %v, want NaN", in, n.Kind, n.Num)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", "1:1: unexpected end of input, expected a value"},
		{"  // only a comment", "1:20: unexpected end of input, expected a value"},
		{"{", "1:2: unexpected end of input, expected a key or '}'"},
		{"{a 1}", "1:4: unexpected '1', expected ':' after object key"},
		{"{a: 1 b: 2}", "1:7: unexpected 'b', expected ',' or '}' after object member"},
		{"{\n  a: 1,\n  b: 2\n  c: 3\n}", "4:3: unexpected 'c', expected ',' or '}' after object member"},
		{"[1 2]", "1:4: unexpected '2', expected ',' or ']' after array element"},
		{"[1,,2]", "1:4: unexpected ',', expected a value"},
		{"{,}", "1:2: unexpected ',', expected a key (a string or an identifier) or '}'"},
		{"{1: 2}", "1:2: unexpected '1', expected a key (a string or an identifier) or '}'"},
		{"{a-b: 1}", "1:3: unexpected '-', expected ':' after object key"},
		{"'abc", "1:1: unterminated string, expected a closing '"},
		{"\"a\nb\"", "1:3: line break inside a string (escape it as \\n, or end the line with \\)"},
		{`"\1"`, `1:2: invalid escape sequence: a backslash may not be followed by a digit other than 0`},
		{`"\01"`, `1:2: invalid escape sequence: \0 may not be followed by a digit`},
		{`"\x4"`, `1:2: invalid escape sequence: \x needs two hexadecimal digits`},
		{`"\u12G4"`, `1:2: invalid escape sequence: \u needs four hexadecimal digits`},
		{`{\u0031a: 1}`, `1:2: escape in key does not name an identifier character`},
		{`{\x41: 1}`, `1:2: invalid escape in key, expected \u followed by four hexadecimal digits`},
		{"01", "1:2: leading zeros are not allowed in numbers"},
		{"1.2.3", "1:4: unexpected '.' after the value, expected end of input"},
		{"1e", "1:3: unexpected end of input, expected a digit in the exponent"},
		{".", "1:2: unexpected end of input, expected a digit"},
		{"+", "1:2: unexpected end of input, expected a digit"},
		{"0x", "1:3: unexpected end of input, expected a hexadecimal digit"},
		{"0xg", "1:3: unexpected 'g', expected a hexadecimal digit"},
		{"12abc", "1:3: unexpected 'a' after number"},
		{"Infinit", "1:1: invalid literal, expected a value (true, false, null, a number, a string, an array or an object)"},
		{"-Nan", "1:1: invalid literal, expected a value (true, false, null, a number, a string, an array or an object)"},
		{"tru", "1:1: invalid literal, expected a value (true, false, null, a number, a string, an array or an object)"},
		{"nullx", "1:1: invalid literal, expected a value (true, false, null, a number, a string, an array or an object)"},
		{"undefined", "1:1: unexpected 'u', expected a value"},
		{"1 2", "1:3: unexpected '2' after the value, expected end of input"},
		{"/* open", "1:1: unterminated block comment, expected */"},
		{"[1] /*", "1:5: unterminated block comment, expected */"},
		{"\xff", "1:1: unexpected invalid UTF-8 byte 0xff, expected a value"},
		{"[\x01]", "1:2: unexpected control character U+0001, expected a value"},
		{"{a: 1,\r\n b: @}", "2:5: unexpected '@', expected a value"},
		{"\u2028\u2028 x", "3:2: unexpected 'x', expected a value"},
		{"[\"é\", ü]", "1:7: unexpected 'ü', expected a value"},
		{strings.Repeat("[", MaxDepth+1), "1:10001: nesting deeper than 10000 levels"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.in))
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want error %q", tt.in, tt.want)
			continue
		}
		if got := err.Error(); got != tt.want {
			t.Errorf("Parse(%q) error\n got: %s\nwant: %s", tt.in, got, tt.want)
		}
	}
}

func TestOffsets(t *testing.T) {
	src := "{\n  a: 'x', // c\n  \"b\": [1, {c: true}],\n}"
	root, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	type span struct {
		Text  string
		Comma string
	}
	at := func(n *Node) span {
		s := span{Text: src[n.Start:n.End]}
		if n.Comma >= 0 {
			s.Comma = src[n.Comma : n.Comma+1]
		}
		return s
	}
	got := map[string]span{}
	var walk func(path string, n *Node)
	walk = func(path string, n *Node) {
		got[path] = at(n)
		for _, m := range n.Members {
			s := span{Text: src[m.KeyStart:m.KeyEnd]}
			if m.KeyQuote != 0 {
				s.Comma = string(m.KeyQuote) // the quote, in the spare field
			}
			got[path+"/key:"+m.Key] = s
			walk(path+"/"+m.Key, m.Value)
		}
		for i, e := range n.Elems {
			walk(path+"/"+string(rune('0'+i)), e)
		}
	}
	walk("", root)
	want := map[string]span{
		"":           {Text: src},
		"/key:a":     {Text: "a"},
		"/a":         {Text: "'x'", Comma: ","},
		"/key:b":     {Text: `"b"`, Comma: `"`},
		"/b":         {Text: "[1, {c: true}]", Comma: ","},
		"/b/0":       {Text: "1", Comma: ","},
		"/b/1":       {Text: "{c: true}"},
		"/b/1/key:c": {Text: "c"},
		"/b/1/c":     {Text: "true"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

func TestAppendJSON(t *testing.T) {
	src := `{b: 0x10, a: [.5, +1, 1e2, 'q"'], c: {}, d: [], b: Infinity, e: -NaN, f: 1.0}`
	root, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := string(AppendJSON(nil, []byte(src), root, "", nil))
	want := `{"a":[0.5,1,1e2,"q\""],"c":{},"d":[],"b":Infinity,"e":NaN,"f":1.0}`
	if got != want {
		t.Errorf("compact:\n got %s\nwant %s", got, want)
	}
	indented := string(AppendJSON(nil, []byte(src), root.Get("a").Value, "  ", nil))
	if want := "[\n  0.5,\n  1,\n  1e2,\n  \"q\\\"\"\n]"; indented != want {
		t.Errorf("indented:\n got %s\nwant %s", indented, want)
	}
	if p, ok := root.Finite(); ok || cmp.Diff([]string{"b"}, p) != "" {
		t.Errorf("Finite() = %v, %v; want [b], false", p, ok)
	}
	masked := AppendJSON(nil, []byte(src), root.Get("a").Value, "", func(path []string, _ []*Node, n *Node) ([]byte, bool) {
		if n.Kind == String {
			return []byte(`"*"`), true
		}
		return nil, false
	})
	if want := `[0.5,1,1e2,"*"]`; string(masked) != want {
		t.Errorf("replace: got %s, want %s", masked, want)
	}
}

func TestAppendQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "quo\"te", "back\\slash", "ctl\x00\x1f\x7f", "line\nbreak\r\t", "\u2028\u2029", "é😀"} {
		for _, q := range []byte{'"', '\''} {
			lit := AppendQuote(nil, s, q)
			n, err := Parse(lit)
			if err != nil {
				t.Fatalf("Parse(%s): %v", lit, err)
			}
			if n.Str != s {
				t.Errorf("round trip of %q via %s gave %q", s, lit, n.Str)
			}
			if q == '"' {
				var back string
				if err := json.Unmarshal(lit, &back); err != nil || back != s {
					t.Errorf("encoding/json reads %s as %q, %v; want %q", lit, back, err, s)
				}
			}
		}
	}
}

func TestIsIdentifier(t *testing.T) {
	for s, want := range map[string]bool{"a": true, "$_x9": true, "ünï": true, "": false, "9a": false, "a-b": false, "a b": false, "a.b": false} {
		if got := IsIdentifier(s); got != want {
			t.Errorf("IsIdentifier(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestIsBlank(t *testing.T) {
	for s, want := range map[string]bool{"": true, " \n\t": true, "// c\n/* d */": true, "{}": false, "/* open": false, "x": false} {
		if got := IsBlank([]byte(s)); got != want {
			t.Errorf("IsBlank(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestAppendJSONManyMembersOneDuplicate: an object of many keys, one of them repeated, renders
// at a cost proportional to its size. Which member a duplicate overrides was found by a search
// of the members for each of them, hours for a 16 MiB file. The deadline only guards against
// that hang.
func TestAppendJSONManyMembersOneDuplicate(t *testing.T) {
	const n = 300_000
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, "k%d: %d, ", i, i)
	}
	b.WriteString("k0: -1}")
	src := []byte(b.String())
	root, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []byte, 1)
	go func() { done <- AppendJSON(nil, src, root, "", nil) }()
	var out []byte
	select {
	case out = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("an object of %d members has not been rendered after 2 minutes", n)
	}
	if !bytes.HasPrefix(out, []byte(`{"k1":1,`)) || !bytes.HasSuffix(out, []byte(`,"k0":-1}`)) {
		t.Errorf("rendered %.40s…%s", out, out[max(0, len(out)-40):])
	}
}
