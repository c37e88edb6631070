package mcpserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// initializeFieldError says which field of initialize's params (an object) has a value of the
// wrong type, as the SDK's decoding into mcp.InitializeParams would find it, or "". The SDK
// answers such params with its decoder's error and code 0 over HTTP (-32603 over stdio), and
// quotes the whole of the params in it. Keys match exactly, as the SDK's decoder matches them:
// the standard library's would also take "ProtocolVersion" for protocolVersion, which the SDK
// ignores.
func initializeFieldError(params []byte) string {
	path, want, got := typeMismatch(params, reflect.TypeFor[mcp.InitializeParams](), "")
	if want == "" {
		return ""
	}
	return fmt.Sprintf("invalid params: %q of initialize must be %s (it is %s)", path, want, got)
}

// typeMismatch walks a JSON value (valid JSON) against the Go type it is to be decoded into, and
// returns the path of the first value that would not decode, what it must be and what it is.
// Null decodes into anything, as it does for both the standard library and the SDK.
func typeMismatch(raw []byte, t reflect.Type, path string) (at, want, got string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return "", "", ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	kind := valueKind(raw)
	mismatch := func(want string) (string, string, string) { return path, want, kind }
	switch t.Kind() {
	case reflect.Interface:
		return "", "", ""
	case reflect.String:
		if raw[0] != '"' {
			return mismatch("a string")
		}
	case reflect.Bool:
		if raw[0] != 't' && raw[0] != 'f' {
			return mismatch("a boolean")
		}
	case reflect.Slice:
		if raw[0] != '[' {
			return mismatch("an array")
		}
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return "", "", ""
		}
		for i, e := range elems {
			if at, want, got := typeMismatch(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); want != "" {
				return at, want, got
			}
		}
	case reflect.Map, reflect.Struct:
		if raw[0] != '{' {
			return mismatch("an object")
		}
		// In the order written, repeated keys too: the SDK's decoder decodes each of them.
		for key, val := range objectMembers(raw) {
			elem := t
			if t.Kind() == reflect.Struct {
				f, ok := fieldByJSONName(t, key)
				if !ok {
					continue // unknown keys are ignored
				}
				elem = f
			} else {
				elem = t.Elem()
			}
			if at, want, got := typeMismatch(val, elem, joinPath(path, key)); want != "" {
				return at, want, got
			}
		}
	default:
		// No other kind is in mcp.InitializeParams; should one come, the standard library says.
		if json.Unmarshal(raw, reflect.New(t).Interface()) != nil {
			return mismatch("a " + t.Kind().String())
		}
	}
	return "", "", ""
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// valueKind names the type of a JSON value by its first byte (anything unknown is "a number").
func valueKind(raw []byte) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// fieldByJSONName is the type of the field of struct t that JSON key name decodes into, matched
// exactly; an untagged embedded struct's fields count as t's own.
func fieldByJSONName(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || tag == "-" {
			continue
		}
		if tag == "" && f.Anonymous {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if ft, ok := fieldByJSONName(et, name); ok {
					return ft, true
				}
				continue
			}
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name {
			return f.Type, true
		}
	}
	return nil, false
}

// objectMembers yields the members of a JSON object (valid JSON) in the order written.
func objectMembers(raw []byte) func(yield func(string, json.RawMessage) bool) {
	return func(yield func(string, json.RawMessage) bool) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.Token(); err != nil {
			return
		}
		for dec.More() {
			tok, err := dec.Token()
			key, ok := tok.(string)
			if err != nil || !ok {
				return
			}
			var val json.RawMessage
			if dec.Decode(&val) != nil || !yield(key, val) {
				return
			}
		}
	}
}
