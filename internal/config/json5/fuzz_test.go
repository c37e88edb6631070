package json5

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks that Parse never panics, that every valid JSON text is accepted with the
// value encoding/json gives it, and that whatever parses renders to JSON that parses back to the
// same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{specExample, `{"a":[1,2.5e3,"\u00e9\ud83d\ude00"],"b":null}`, "[]", `"\ud800"`, "0x1F", "{a:1,}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Parse(data)
		var want any
		if json.Valid(data) && json.Unmarshal(data, &want) == nil {
			if err != nil {
				t.Fatalf("valid JSON %q rejected: %v", data, err)
			}
			// cmp is exponential on deeply nested slices; compare first, diff only to report.
			if got := n.Interface(); !equalValues(want, got) {
				t.Fatalf("value of %q differs from encoding/json (-json +json5):\n%s", data, cmp.Diff(want, got))
			}
		}
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("error is %T, want *SyntaxError", err)
			}
			return
		}
		if _, finite := n.Finite(); !finite {
			return
		}
		out := AppendJSON(nil, data, n, "", nil)
		var back any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("AppendJSON of %q gave invalid JSON %q: %v", data, out, err)
		}
		if !equalValues(n.Interface(), back) {
			t.Fatalf("AppendJSON of %q changed the value (-parsed +rendered):\n%s", data, cmp.Diff(n.Interface(), back))
		}
	})
}

// FuzzSet checks that an edit on any object document yields a document that parses, holds the
// value at the path, and keeps every other top-level member; and that Unset takes it away again.
func FuzzSet(f *testing.F) {
	f.Add([]byte("{\n  a: 1, // c\n}\n"), "b.c", []byte("true"))
	f.Add([]byte("{a: {b: []}}"), "a.b[0]", []byte("'x'"))
	f.Add([]byte("{\"a\": 1}"), "a", []byte("{x: [1, 2]}"))
	f.Add([]byte("{}"), "x.y.z", []byte("null"))
	f.Fuzz(func(t *testing.T, doc []byte, pathText string, value []byte) {
		root, err := Parse(doc)
		if err != nil || root.Kind != Object {
			return
		}
		path, err := ParsePath(pathText)
		if err != nil {
			return
		}
		vn, err := Parse(value)
		if err != nil {
			return
		}
		out, err := Set(doc, path, value)
		if err != nil {
			return // a path through a scalar, an index out of range: refused, fine
		}
		got, err := Parse(out)
		if err != nil {
			t.Fatalf("Set(%q, %q, %q) produced unparsable text %q: %v", doc, pathText, value, out, err)
		}
		n, err := Lookup(got, path)
		if err != nil {
			t.Fatalf("Set(%q, %q, %q) = %q, but the path is missing: %v", doc, pathText, value, out, err)
		}
		if !equalValues(vn.Interface(), n.Interface()) {
			t.Fatalf("Set(%q, %q, %q) = %q holds %v", doc, pathText, value, out, n.Interface())
		}
		for _, m := range root.Members {
			if m.Key == path[0] || root.Get(m.Key) != m {
				continue
			}
			if after := got.Get(m.Key); after == nil || !bytes.Equal(doc[m.Value.Start:m.Value.End], out[after.Value.Start:after.Value.End]) {
				t.Fatalf("Set(%q, %q) disturbed member %q: %q", doc, pathText, m.Key, out)
			}
		}
		removed, err := Unset(out, path)
		if err != nil {
			t.Fatalf("Unset(%q, %q): %v", out, pathText, err)
		}
		back, err := Parse(removed)
		if err != nil {
			t.Fatalf("Unset(%q, %q) produced unparsable text %q: %v", out, pathText, removed, err)
		}
		if len(path) > 0 && back.Kind == Object {
			if _, isIndex := Index(path[len(path)-1]); !isIndex {
				if _, err := Lookup(back, path); err == nil {
					t.Fatalf("Unset(%q, %q) = %q still has the path", out, pathText, removed)
				}
			}
		}
	})
}

// equalValues compares values decoded as by encoding/json, treating NaN as equal to itself.
func equalValues(a, b any) bool {
	switch a := a.(type) {
	case float64:
		b, ok := b.(float64)
		return ok && (a == b || (a != a && b != b))
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalValues(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !equalValues(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}

// FuzzPath checks that ParsePath never panics and that FormatPath writes any segments it gives
// (and any keys at all, given as NUL-separated text) so that ParsePath reads them back.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"a.b[0]", `m["openai/gpt-5.2"].x`, `["a.b"]`, "a\x00.b\x00[c]\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if segs, err := ParsePath(s); err == nil {
			if back, err := ParsePath(FormatPath(segs)); err != nil || !cmp.Equal(segs, back) {
				t.Fatalf("ParsePath(%q) = %q, FormatPath %s reads back as %q, %v", s, segs, FormatPath(segs), back, err)
			}
		}
		keys := strings.Split(s, "\x00")
		if !utf8.ValidString(s) {
			return
		}
		if _, isIndex := Index(keys[0]); isIndex || keys[0] == "" {
			return // a path starts with a key
		}
		text := FormatPath(keys)
		back, err := ParsePath(text)
		if err != nil || !cmp.Equal(keys, back) {
			t.Fatalf("FormatPath(%q) = %s reads back as %q, %v", keys, text, back, err)
		}
	})
}
