package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestMergePatch(t *testing.T) {
	tests := []struct {
		name, doc, patch, want string
	}{
		// RFC 7396 Appendix A, in order.
		{"rfc replace", `{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{"rfc add", `{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{"rfc delete", `{"a":"b"}`, `{"a":null}`, `{}`},
		{"rfc delete one", `{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{"rfc array replaced by string", `{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{"rfc string replaced by array", `{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{"rfc nested", `{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{"rfc arrays are not merged", `{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{"rfc array doc and patch", `["a","b"]`, `["c","d"]`, `["c","d"]`},
		{"rfc object replaced by array", `{"a":"b"}`, `["c"]`, `["c"]`},
		{"rfc null patch", `{"a":"foo"}`, `null`, `null`},
		{"rfc string patch", `{"a":"foo"}`, `"bar"`, `"bar"`},
		{"rfc null values in doc stay", `{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{"rfc array doc becomes object", `[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{"rfc nested nulls create empty objects", `{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},

		{"empty patch", `{"a":1}`, ``, `{"a":1}`},
		{"space patch", `{"a":1}`, " \n", `{"a":1}`},
		{"empty object patch compacts", `{"a": 1}`, `{}`, `{"a":1}`},
		{"key order kept, new keys in patch order", `{"z":1,"a":2,"m":3}`, `{"y":4,"a":5,"b":6}`, `{"z":1,"a":5,"m":3,"y":4,"b":6}`},
		{"delete then re-add goes last", `{"a":1,"b":2}`, `{"a":null}`, `{"b":2}`},
		{"delete absent key", `{"a":1}`, `{"x":null}`, `{"a":1}`},
		{"deep merge", `{"a":{"b":{"c":1,"d":2},"e":3}}`, `{"a":{"b":{"d":null,"f":4}}}`, `{"a":{"b":{"c":1,"f":4},"e":3}}`},
		{"object over scalar", `{"a":1}`, `{"a":{"b":null,"c":2}}`, `{"a":{"c":2}}`},
		{"scalar over object", `{"a":{"b":1}}`, `{"a":true}`, `{"a":true}`},
		{"patch values compacted", `{"a":1}`, `{"b": [ 1, 2 ], "c": { "d" : "e" } }`, `{"a":1,"b":[1,2],"c":{"d":"e"}}`},
		{"untouched values kept as written", `{ "a" : [ 1, 2 ] , "b":1 }`, `{"b":2}`, `{"a":[ 1, 2 ],"b":2}`},
		{"escaped key matches", `{"a\u0062":1}`, `{"ab":2}`, `{"a\u0062":2}`},
		{"keys keep their escapes", `{"\u003c":1}`, `{"<":null,"\u00e9":2}`, `{"\u00e9":2}`},
		{"numbers kept as text", `{"a":1.50}`, `{"b":1e400}`, `{"a":1.50,"b":1e400}`},
		{"empty doc is no doc", ``, `{"a":1}`, `{"a":1}`},
		{"scalar doc", `3`, `{"a":1}`, `{"a":1}`},
		{"repeated doc key is one key, the last value", `{"a":1,"b":2,"a":{"x":1}}`, `{"a":{"y":2}}`, `{"a":{"x":1,"y":2},"b":2}`},
		{"repeated doc key deleted", `{"a":1,"b":2,"a":3}`, `{"a":null}`, `{"b":2}`},
		{"repeated doc key untouched", `{"a":1,"a":3}`, `{"b":1}`, `{"a":1,"a":3,"b":1}`},
		{"repeated patch key applies in order", `{}`, `{"a":{"x":1},"a":{"y":2}}`, `{"a":{"x":1,"y":2}}`},
		{"thinking patch over a body", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`,
			`{"reasoning":{"effort":"high","summary":"auto"},"service_tier":"priority","include":["reasoning.encrypted_content"]}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"reasoning":{"effort":"high","summary":"auto"},"service_tier":"priority","include":["reasoning.encrypted_content"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MergePatch([]byte(tt.doc), []byte(tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("MergePatch(%s, %s)\n got %s\nwant %s", tt.doc, tt.patch, got, tt.want)
			}
		})
	}
}

func TestMergePatchErrors(t *testing.T) {
	tests := []struct{ name, doc, patch string }{
		{"patch not JSON", `{"a":1}`, `{"a":}`},
		{"patch truncated", `{"a":1}`, `{"a":1`},
		{"patch with trailing data", `{"a":1}`, `{"a":1} {}`},
		{"scalar patch not JSON", `{"a":1}`, `tru`},
		{"doc not JSON", `{"a":`, `{"a":1}`},
		{"doc truncated", `{"a":1`, `{"b":1}`},
		{"doc with trailing data", `{"a":1}x`, `{"b":1}`},
		{"doc with trailing comma", `{"a":1,}`, `{"b":1}`},
		{"doc key not a string", `{a:1}`, `{"b":1}`},
		{"doc bad nested value", `{"a":[1,]}`, `{"b":1}`},
		{"doc bad escape", `{"a":"\x"}`, `{"b":1}`},
		{"doc control character", "{\"a\":\"\n\"}", `{"b":1}`},
		{"doc bad number", `{"a":01}`, `{"b":1}`},
		{"doc too deep", `{"a":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`, `{"b":1}`},
		{"nested doc not JSON", `{"a":{"b":tru}}`, `{"a":{"c":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MergePatch([]byte(tt.doc), []byte(tt.patch))
			if err == nil {
				t.Fatalf("MergePatch(%q, %q) = %s, want an error", tt.doc, tt.patch, got)
			}
			if !strings.HasPrefix(err.Error(), "merge patch: ") {
				t.Errorf("error %q lacks its context", err)
			}
		})
	}
}

func TestMergePatchDoesNotModifyInputs(t *testing.T) {
	doc := []byte(`{"a":{"b":1},"c":[1]}`)
	patch := []byte(`{"a":{"b":null,"d":2},"c":null}`)
	d0, p0 := bytes.Clone(doc), bytes.Clone(patch)
	if _, err := MergePatch(doc, patch); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, d0) || !bytes.Equal(patch, p0) {
		t.Errorf("inputs changed: doc %s, patch %s", doc, patch)
	}
}

func TestAddMissing(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		extra map[string]json.RawMessage
		want  string
	}{
		{"none", `{"a":1}`, nil, `{"a":1}`},
		{"adds sorted", `{"model":"m"}`, map[string]json.RawMessage{"seed": json.RawMessage(`7`), "logit_bias": json.RawMessage(`{"1": -100}`)}, `{"model":"m","logit_bias":{"1":-100},"seed":7}`},
		{"never overrides", `{"model":"m","stream":true}`, map[string]json.RawMessage{"model": json.RawMessage(`"x"`), "stream": json.RawMessage(`false`), "user": json.RawMessage(`"u"`)}, `{"model":"m","stream":true,"user":"u"}`},
		{"null is copied", `{}`, map[string]json.RawMessage{"stop": json.RawMessage(`null`)}, `{"stop":null}`},
		{"key escaped", `{}`, map[string]json.RawMessage{`a"b`: json.RawMessage(`1`)}, `{"a\"b":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AddMissing([]byte(tt.doc), tt.extra)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAddMissingErrors(t *testing.T) {
	extra := map[string]json.RawMessage{"x": json.RawMessage(`1`)}
	for _, doc := range []string{`[1]`, `"s"`, `{"a":`, ``} {
		if got, err := AddMissing([]byte(doc), extra); err == nil {
			t.Errorf("AddMissing(%q) = %s, want an error", doc, got)
		}
	}
	_, err := AddMissing([]byte(`{}`), map[string]json.RawMessage{"bad": json.RawMessage(`{nope}`)})
	if err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("err = %v, want one naming the field", err)
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, "Incorrect API key provided"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded"},
		{`{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`, "Resource has been exhausted"},
		{`{"error":"model 'x' not found"}`, "model 'x' not found"},
		{`{"message":"Unauthorized"}`, "Unauthorized"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{`{"error":{"code":1},"message":"fallback"}`, "fallback"},
		{`{"error":"","message":"m"}`, "m"},
		{`{"detail":[{"loc":["body"],"msg":"field required"}]}`, ""},
		{`{"error":{"type":"x"}}`, ""},
		// MiniMax's envelope, under an HTTP error status as in a 200.
		{`{"id":"","choices":null,"base_resp":{"status_code":1002,"status_msg":"rate limit exceeded"}}`, "rate limit exceeded"},
		{`{"error":{"message":"first"},"base_resp":{"status_code":1002,"status_msg":"second"}}`, "first"},
		{`{"error":{"message":"kept"},"base_resp":"odd"}`, "kept"},
		{`{"base_resp":{"status_msg":7}}`, ""},
		{`{}`, ""},
		{`[]`, ""},
		{`<html>502 Bad Gateway</html>`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		if got := ErrorMessage([]byte(tt.body)); got != tt.want {
			t.Errorf("ErrorMessage(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

// refMerge is RFC 7396's pseudo-code over decoded values.
func refMerge(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = refMerge(t[k], v)
		}
	}
	return t
}

func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// hasDupKeys reports whether some object in the valid JSON b repeats a key. MergePatch applies
// a patch's members in order, where the reference decodes only the last of a repeated key.
func hasDupKeys(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next token in an object is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				continue
			}
			k := tok.(string)
			if stack[n-1].keys[k] {
				return true
			}
			stack[n-1].keys[k] = true
			stack[n-1].key = false
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].key = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{obj: true, keys: map[string]bool{}, key: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

func FuzzMergePatch(f *testing.F) {
	for _, s := range [][2]string{
		{`{"a":"b"}`, `{"a":"c"}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`},
		{`{"z":1,"a":2}`, `{"y":4,"a":null}`},
		{`[1,2]`, `{"a":"b","c":null}`},
		{`{"a\u0062":1}`, `{"ab":{"x":[1,{"y":null}]}}`},
		{`{"a": 1.5e3 , "b" : "\u00e9"}`, `"bar"`},
		{`{"model":"m","messages":[],"stream":true}`, `{"reasoning":{"effort":"high"},"stream":null}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, doc, patch []byte) {
		out, err := MergePatch(doc, patch)
		if err != nil {
			if json.Valid(patch) && (json.Valid(doc) || len(bytes.TrimSpace(doc)) == 0) {
				t.Fatalf("MergePatch(%q, %q): %v on valid input", doc, patch, err)
			}
			return
		}
		if len(bytes.TrimSpace(patch)) == 0 {
			if !bytes.Equal(out, doc) {
				t.Fatalf("empty patch changed the doc")
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("MergePatch(%q, %q) = %q, not JSON", doc, patch, out)
		}
		again, err := MergePatch(out, patch)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q then %q (%v)", out, again, err)
		}
		if !utf8.Valid(doc) || !utf8.Valid(patch) || hasDupKeys(patch) {
			return
		}
		pv, err := decodeAny(patch)
		if err != nil {
			t.Fatalf("patch accepted but does not decode: %v", err)
		}
		var dv any
		if _, isObj := pv.(map[string]any); isObj && len(bytes.TrimSpace(doc)) > 0 {
			if dv, err = decodeAny(doc); err != nil {
				t.Fatalf("doc accepted but does not decode: %v", err)
			}
		}
		gv, err := decodeAny(out)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(refMerge(dv, pv), gv); diff != "" {
			t.Fatalf("MergePatch(%q, %q) = %q, differs from RFC 7396 (-want +got):\n%s", doc, patch, out, diff)
		}
		// Surviving keys of doc keep their order, ahead of the keys the patch adds.
		dm, docObj, _ := splitObject(doc)
		om, outObj, _ := splitObject(out)
		if !docObj || !outObj {
			return
		}
		var kept []string
		for _, m := range dm {
			if slices.ContainsFunc(om, func(o member) bool { return o.key == m.key }) {
				kept = append(kept, m.key)
			}
		}
		var lead []string
		for _, m := range om[:len(kept)] {
			lead = append(lead, m.key)
		}
		if diff := cmp.Diff(kept, lead); diff != "" {
			t.Fatalf("doc key order lost (-want +got):\n%s", diff)
		}
	})
}

func bigBody() []byte {
	var b bytes.Buffer
	b.WriteString(`{"model":"gpt-5.5","messages":[`)
	for i := range 50 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"role":"user","content":"message %d with some text in it, \"quoted\" and \\u00e9 escaped, long enough to matter for a scanner"}`, i)
	}
	b.WriteString(`],"tools":[`)
	for i := range 20 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"function","function":{"name":"tool_%d","description":"does thing %d","parameters":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"number"}}},"required":["a"]}}}`, i, i)
	}
	b.WriteString(`],"stream":true}`)
	return b.Bytes()
}

func BenchmarkMergePatch(b *testing.B) {
	doc := bigBody()
	patch := []byte(`{"reasoning_effort":"high","service_tier":"priority","stream":null}`)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MergePatch(doc, patch); err != nil {
			b.Fatal(err)
		}
	}
}
