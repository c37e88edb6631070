package json5

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestSet(t *testing.T) {
	tests := []struct {
		name, in, path, value, want string
	}{
		{
			name: "replace keeps comments and quoting",
			in:   "{\n  // the mode\n  mode: 'code', // inline\n  other: 1,\n}\n",
			path: "mode", value: `"tools"`,
			want: "{\n  // the mode\n  mode: \"tools\", // inline\n  other: 1,\n}\n",
		},
		{
			name: "replace an object with a scalar",
			in:   "{tools: {toolSearch: {mode: 'tools'}}}",
			path: "tools.toolSearch", value: "true",
			want: "{tools: {toolSearch: true}}",
		},
		{
			name: "value text is trimmed of comments and space",
			in:   "{a: 1}",
			path: "a", value: " /* c */ {b: 2} // d\n",
			want: "{a: {b: 2}}",
		},
		{
			name: "insert after a trailing comma and comment",
			in:   "{\n  a: 1, // one\n}\n",
			path: "b", value: "2",
			want: "{\n  a: 1, // one\n  b: 2,\n}\n",
		},
		{
			name: "insert without trailing comma adds the separator",
			in:   "{\n    \"a\": 1 // one\n}\n",
			path: "b", value: "2",
			want: "{\n    \"a\": 1, // one\n    \"b\": 2\n}\n",
		},
		{
			name: "insert creates nested objects in the file's style",
			in:   "{\n  tools: {\n    allow: ['*'],\n  },\n}\n",
			path: "plugins.entries.tavily.enabled", value: "true",
			want: "{\n  tools: {\n    allow: ['*'],\n  },\n  plugins: {\n    entries: {\n      tavily: {\n        enabled: true,\n      },\n    },\n  },\n}\n",
		},
		{
			name: "insert into the deepest existing object",
			in:   "{\n  plugins: {\n    entries: {\n      tokenjuice: {enabled: false},\n    },\n  },\n}\n",
			path: "plugins.entries.tavily.enabled", value: "true",
			want: "{\n  plugins: {\n    entries: {\n      tokenjuice: {enabled: false},\n      tavily: {\n        enabled: true,\n      },\n    },\n  },\n}\n",
		},
		{
			name: "JSON file stays JSON",
			in:   "{\n  \"tools\": {\n    \"allow\": [\"a\"]\n  }\n}\n",
			path: "tools.web.search.provider", value: `"tavily"`,
			want: "{\n  \"tools\": {\n    \"allow\": [\"a\"],\n    \"web\": {\n      \"search\": {\n        \"provider\": \"tavily\"\n      }\n    }\n  }\n}\n",
		},
		{
			name: "single-quoted keys are matched",
			in:   "{\n  'a': 1,\n}",
			path: "b", value: "2",
			want: "{\n  'a': 1,\n  'b': 2,\n}",
		},
		{
			name: "a key that is not an identifier is quoted",
			in:   "{\n  a: 1,\n}",
			path: "my-server", value: "2",
			want: "{\n  a: 1,\n  \"my-server\": 2,\n}",
		},
		{
			name: "empty object expands",
			in:   "{}",
			path: "a.b", value: "1",
			want: "{\n  a: {\n    b: 1,\n  },\n}",
		},
		{
			name: "empty nested object takes its line's indentation",
			in:   "{\n  mcp: {\n    servers: {},\n  },\n}\n",
			path: "mcp.servers.fs.command", value: `"npx"`,
			want: "{\n  mcp: {\n    servers: {\n      fs: {\n        command: \"npx\",\n      },\n    },\n  },\n}\n",
		},
		{
			name: "comments in an empty object are kept",
			in:   "{\n  // nothing yet\n}\n",
			path: "a", value: "1",
			want: "{\n  // nothing yet\n  a: 1,\n}\n",
		},
		{
			name: "tabs and CRLF",
			in:   "{\r\n\ta: {\r\n\t\tb: 1,\r\n\t},\r\n}\r\n",
			path: "a.c.d", value: "2",
			want: "{\r\n\ta: {\r\n\t\tb: 1,\r\n\t\tc: {\r\n\t\t\td: 2,\r\n\t\t},\r\n\t},\r\n}\r\n",
		},
		{
			name: "one-line object grows on its line",
			in:   "{a: 1, b: {c: 2}}",
			path: "b.d.e", value: "3",
			want: "{a: 1, b: {c: 2, d: {e: 3}}}",
		},
		{
			name: "one-line object with trailing comma",
			in:   "{a: 1,}",
			path: "b", value: "2",
			want: "{a: 1, b: 2,}",
		},
		{
			name: "closing brace on the last member's line",
			in:   "{\n  a: 1 }",
			path: "b", value: "2",
			want: "{\n  a: 1,\n  b: 2 }",
		},
		{
			name: "replace an array element",
			in:   "{list: [{id: 'a'}, {id: 'b'}]}",
			path: "list[1].id", value: `'c'`,
			want: "{list: [{id: 'a'}, {id: 'c'}]}",
		},
		{
			name: "dotted index",
			in:   "{list: [{id: 'a'}]}",
			path: "list.0.name", value: `'x'`,
			want: "{list: [{id: 'a', name: 'x'}]}",
		},
		{
			name: "append to an array",
			in:   "{\n  allow: [\n    'a',\n  ],\n}",
			path: "allow[1]", value: `'b'`,
			want: "{\n  allow: [\n    'a',\n    'b',\n  ],\n}",
		},
		{
			name: "append an object to an empty array",
			in:   "{\n  list: [],\n}",
			path: "list.0.id", value: `'main'`,
			want: "{\n  list: [\n    {\n      id: 'main',\n    },\n  ],\n}",
		},
		{
			name: "duplicate key: the effective (last) one is replaced",
			in:   "{a: 1, a: 2}",
			path: "a", value: "3",
			want: "{a: 1, a: 3}",
		},
		{
			name: "multi-line value text is inserted as given",
			in:   "{\n  a: 1,\n}",
			path: "b", value: "{\n  c: 1,\n}",
			want: "{\n  a: 1,\n  b: {\n  c: 1,\n},\n}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, err := ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Set([]byte(tt.in), path, []byte(tt.value))
			if err != nil {
				t.Fatalf("Set: %v", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Set(%s) (-want +got):\n%s", tt.path, diff)
			}
			checkSet(t, got, path, tt.value)
		})
	}
}

// checkSet asserts that the edited text parses and holds value at path.
func checkSet(t *testing.T, out []byte, path []string, value string) {
	t.Helper()
	root, err := Parse(out)
	if err != nil {
		t.Fatalf("edited text does not parse: %v\n%s", err, out)
	}
	n, err := Lookup(root, path)
	if err != nil {
		t.Fatalf("Lookup after Set: %v", err)
	}
	want, err := Parse([]byte(value))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Interface(), n.Interface()); diff != "" {
		t.Errorf("value at path after Set (-want +got):\n%s", diff)
	}
}

func TestSetErrors(t *testing.T) {
	tests := []struct {
		in, path, value, want string
	}{
		{"{toolSearch: true}", "toolSearch.mode", "1", "toolSearch is a boolean, not an object"},
		{"{a: [1]}", "a.x", "1", `a is an array, so "x" must be an index`},
		{"{a: [1]}", "a.5", "1", "index 5 is out of range (a has 1 elements)"},
		{"[]", "a", "1", `the document is an array, so "a" must be an index`},
		{"1", "a", "1", "the document is a number, not an object"},
		{"{}", "a", "{", "value: 1:2: unexpected end of input, expected a key or '}'"},
		{"{", "a", "1", "1:2: unexpected end of input, expected a key or '}'"},
	}
	for _, tt := range tests {
		path, err := ParsePath(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Set([]byte(tt.in), path, []byte(tt.value))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Set(%q, %s, %q) error = %v, want %q", tt.in, tt.path, tt.value, err, tt.want)
		}
	}
}

func TestUnset(t *testing.T) {
	tests := []struct {
		name, in, path, want string
	}{
		{
			name: "middle member with its line",
			in:   "{\n  a: 1,\n  // about b\n  b: 2, // b!\n  c: 3,\n}\n",
			path: "b",
			want: "{\n  a: 1,\n  // about b\n  c: 3,\n}\n",
		},
		{
			name: "last member without trailing comma drops the previous comma",
			in:   "{\n  \"a\": 1,\n  \"b\": 2\n}\n",
			path: "b",
			want: "{\n  \"a\": 1\n}\n",
		},
		{
			name: "last member with trailing comma",
			in:   "{\n  a: 1,\n  b: 2,\n}\n",
			path: "b",
			want: "{\n  a: 1,\n}\n",
		},
		{
			name: "multi-line member",
			in:   "{\n  a: {\n    x: 1,\n  },\n  b: 2,\n}",
			path: "a",
			want: "{\n  b: 2,\n}",
		},
		{
			name: "only member closes the object",
			in:   "{\n  tavily: {\n    enabled: true,\n  },\n}",
			path: "tavily.enabled",
			want: "{\n  tavily: {},\n}",
		},
		{
			name: "comment left in an emptied object stays",
			in:   "{\n  // keep\n  a: 1,\n}",
			path: "a",
			want: "{\n  // keep\n}",
		},
		{
			name: "inline first",
			in:   "{a: 1, b: 2, c: 3}",
			path: "a",
			want: "{b: 2, c: 3}",
		},
		{
			name: "inline last",
			in:   "{a: 1, b: 2, c: 3}",
			path: "c",
			want: "{a: 1, b: 2}",
		},
		{
			name: "inline only",
			in:   "{x: {a: 1}}",
			path: "x.a",
			want: "{x: {}}",
		},
		{
			name: "array element",
			in:   "{allow: ['a', 'b', 'c']}",
			path: "allow[1]",
			want: "{allow: ['a', 'c']}",
		},
		{
			name: "every duplicate goes",
			in:   "{\n  a: 1,\n  b: 2,\n  a: 3,\n}",
			path: "a",
			want: "{\n  b: 2,\n}",
		},
		{
			name: "CRLF lines",
			in:   "{\r\n  a: 1,\r\n  b: 2,\r\n}",
			path: "a",
			want: "{\r\n  b: 2,\r\n}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, err := ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Unset([]byte(tt.in), path)
			if err != nil {
				t.Fatalf("Unset: %v", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Unset(%s) (-want +got):\n%s", tt.path, diff)
			}
			root, err := Parse(got)
			if err != nil {
				t.Fatalf("result does not parse: %v", err)
			}
			if _, err := Lookup(root, path); !errors.Is(err, ErrNotFound) && tt.name != "array element" {
				t.Errorf("after Unset, Lookup(%s) = %v, want ErrNotFound", tt.path, err)
			}
		})
	}
}

func TestUnsetMissing(t *testing.T) {
	for _, p := range []string{"b", "a.x", "a.x.y", "list.3"} {
		path, _ := ParsePath(p)
		if _, err := Unset([]byte("{a: 1, list: []}"), path); !errors.Is(err, ErrNotFound) {
			t.Errorf("Unset(%s) error = %v, want ErrNotFound", p, err)
		}
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "a", want: []string{"a"}},
		{in: "plugins.entries.tavily.enabled", want: []string{"plugins", "entries", "tavily", "enabled"}},
		{in: "agents.list[0].id", want: []string{"agents", "list", "0", "id"}},
		{in: "agents.list.0.id", want: []string{"agents", "list", "0", "id"}},
		{in: "m[1][2]", want: []string{"m", "1", "2"}},
		{in: "", wantErr: true},
		{in: "a..b", wantErr: true},
		{in: ".a", wantErr: true},
		{in: "a.", wantErr: true},
		{in: "[0]", wantErr: true},
		{in: "a[x]", wantErr: true},
		{in: "a[01]", wantErr: true},
		{in: "a[0", wantErr: true},
		{in: "a[0]b", wantErr: true},
		{in: "a]", wantErr: true},
		{in: `agents.defaults.models["openai/gpt-5.2"].params`, want: []string{"agents", "defaults", "models", "openai/gpt-5.2", "params"}},
		{in: `m['a.b']["c[d]"][0]`, want: []string{"m", "a.b", "c[d]", "0"}},
		{in: `m["\u0041\""]`, want: []string{"m", `A"`}},
		{in: `m[""].x`, want: []string{"m", "", "x"}},
		{in: `m["a"`, wantErr: true},
		{in: `m["a"x]`, wantErr: true},
		{in: `m["a"]x`, wantErr: true},
		{in: `["a.b"].c`, want: []string{"a.b", "c"}},
		{in: `[0].c`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParsePath(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParsePath(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParsePath(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestFormatPathRoundTrip: a path FormatPath writes (as the config's error messages name a
// setting) is one ParsePath reads back, keys holding dots and brackets included.
func TestFormatPathRoundTrip(t *testing.T) {
	for _, segs := range [][]string{
		{"plugins", "entries", "tavily", "enabled"},
		{"agents", "defaults", "models", "openai/gpt-5.2", "params", "thinking"},
		{"agents", "list", "0", "id"},
		{"m", "a[0]", "", "b.c.d", `q"uote`},
		{"a.b", "c"},
	} {
		text := FormatPath(segs)
		got, err := ParsePath(text)
		if err != nil {
			t.Errorf("ParsePath(FormatPath(%q) = %s): %v", segs, text, err)
			continue
		}
		if diff := cmp.Diff(segs, got); diff != "" {
			t.Errorf("ParsePath(%s) (-want +got):\n%s", text, diff)
		}
	}
	if got, want := FormatPath([]string{"agents", "defaults", "models", "openai/gpt-5.2"}), `agents.defaults.models["openai/gpt-5.2"]`; got != want {
		t.Errorf("FormatPath = %s, want %s", got, want)
	}
}

// TestGoldenEdits runs a sequence of edits over a realistic file and compares each result with
// testdata/edits/<name>.golden byte for byte. Run with -update to rewrite, then read the diff.
func TestGoldenEdits(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "edits", "input.json5"))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name, op, path, value string
	}{
		{"01-set-existing", "set", "tools.toolSearch", `{mode: "tools"}`},
		{"02-set-new-plugin", "set", "plugins.entries.tavily.enabled", "true"},
		{"03-set-new-section", "set", "gateway.auth.token", `{"$env": "NODMIX_TOKEN"}`},
		{"04-set-server", "set", "mcp.servers.github.url", `"https://api.example.com/mcp"`},
		{"05-unset-comment-line", "unset", "tools.deny", ""},
		{"06-unset-last", "unset", "mcp.servers.fs.timeoutMs", ""},
		{"07-append", "set", "tools.allow[2]", `"mcp:github:*"`},
	}
	cur := src
	for _, st := range steps {
		path, err := ParsePath(st.path)
		if err != nil {
			t.Fatal(err)
		}
		switch st.op {
		case "set":
			cur, err = Set(cur, path, []byte(st.value))
		default:
			cur, err = Unset(cur, path)
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		golden := filepath.Join("testdata", "edits", st.name+".golden")
		if *update {
			if err := os.WriteFile(golden, cur, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create)", err)
		}
		if diff := cmp.Diff(string(want), string(cur)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
		if _, err := Parse(cur); err != nil {
			t.Errorf("%s: result does not parse: %v", st.name, err)
		}
	}
	// Lines the edits did not touch are still there, comments included.
	for _, line := range []string{"// nodmix configuration", "  /* exposure */", "// keep this comment"} {
		if !strings.Contains(string(cur), line) {
			t.Errorf("final text lost %q", line)
		}
	}
}
