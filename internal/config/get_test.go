package config

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/config/json5"
)

// TestGetRefusesNonFinite: JSON5 spells Infinity and NaN, JSON does not, and Get prints JSON:
// a value holding such a number is refused with an *Error naming the number's path and the
// rule, where Get used to print the bare token (`"codeTimeoutMs": Infinity`), which no JSON
// reader takes. A masked secret is shown masked whatever it holds; a duplicate that a later key
// overrides is not shown and does not count.
func TestGetRefusesNonFinite(t *testing.T) {
	const text = `{
  tools: {toolSearch: {codeTimeoutMs: Infinity, maxSearchLimit: -Infinity}},
  plugins: {entries: {tavily: {config: {webSearch: {apiKey: NaN, list: [1, NaN]}}}}},
  agents: {x: NaN, x: 1},
}`
	f, err := Load(writeFile(t, text, 0o600))
	if f == nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, want, errPath string
	}{
		{path: "", errPath: "tools.toolSearch.codeTimeoutMs"},
		{path: "tools", errPath: "tools.toolSearch.codeTimeoutMs"},
		{path: "tools.toolSearch.maxSearchLimit", errPath: "tools.toolSearch.maxSearchLimit"},
		{path: "plugins", errPath: "plugins.entries.tavily.config.webSearch.list.1"},
		{path: "plugins.entries.tavily.config.webSearch.list[1]", errPath: "plugins.entries.tavily.config.webSearch.list.1"},
		{path: "plugins.entries.tavily.config.webSearch.apiKey", want: `"********"`},
		{path: "plugins.entries.tavily.config.webSearch.list[0]", want: `1`},
		{path: "agents", want: "{\n  \"x\": 1\n}"},
	} {
		got, err := f.Get(tt.path)
		if tt.errPath != "" {
			var e *Error
			want := &Error{Path: tt.errPath, Rule: nonFiniteRule}
			if !errors.As(err, &e) || got != nil {
				t.Errorf("Get(%q) = %q, %v; want the error %q", tt.path, got, err, want)
				continue
			}
			if diff := cmp.Diff(want, e); diff != "" {
				t.Errorf("Get(%q) error (-want +got):\n%s", tt.path, diff)
			}
			continue
		}
		if err != nil || string(got) != tt.want || !json.Valid(got) {
			t.Errorf("Get(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
}

// FuzzGet checks that Get of any file that parses, at the root and at each top-level key, gives
// valid JSON or an error that names a path (*Error) or says the path is not set; never a panic.
func FuzzGet(f *testing.F) {
	f.Add([]byte(`{tools: {toolSearch: {codeTimeoutMs: Infinity}}, a: [NaN, -Infinity, 0x10, +1, .5]}`))
	f.Add([]byte(`{mcp: {servers: {x: {command: "c", args: ["--token", "t"], env: {A: 1e999}}}}}`))
	f.Add([]byte(`{"a.b": {c: 'x', c: NaN}, "": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		root, cfg, _ := decodeText(data, "")
		if cfg == nil {
			return // a syntax error: FuzzParse's ground
		}
		file := &File{src: data, root: root, cfg: cfg}
		paths := []string{""}
		if root != nil {
			for _, m := range root.Members {
				paths = append(paths, json5.JoinPath("", m.Key))
			}
		}
		for _, p := range paths {
			out, err := file.Get(p)
			var e *Error
			switch {
			case err == nil && !json.Valid(out):
				t.Fatalf("Get(%q) is not JSON: %q", p, out)
			case err != nil && !errors.As(err, &e) && !errors.Is(err, ErrNotFound):
				t.Fatalf("Get(%q) error %v is neither an *Error nor ErrNotFound", p, err)
			}
		}
	})
}
