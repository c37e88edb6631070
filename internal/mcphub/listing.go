package mcphub

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nodmix/nodmix/internal/jsondepth"
)

// screenToolsPage reads a tools/list result before the SDK does. The SDK decodes a page whole:
// one tool it cannot read (a name that is a number) fails the listing, and the server goes down
// with all its tools, its error quoting Go types. Here each tool is read on its own, and one
// that cannot be read is left out of the page, with why (leftOut); the others stay. A result that
// is not an object with a tools array is left to the SDK, whose error it is: there is nothing
// good in it to keep. A page whose tools all read comes back as it is, not encoded again.
func screenToolsPage(result json.RawMessage) (_ json.RawMessage, leftOut []string) {
	var page map[string]json.RawMessage
	if json.Unmarshal(result, &page) != nil {
		return result, nil
	}
	var tools []json.RawMessage
	if json.Unmarshal(page["tools"], &tools) != nil {
		return result, nil
	}
	kept := tools[:0:0]
	for i, raw := range tools {
		why := toolError(raw)
		if why == "" {
			kept = append(kept, raw)
			continue
		}
		leftOut = append(leftOut, fmt.Sprintf("tools[%d]%s: %s", i, toolName(raw), why))
	}
	if leftOut == nil {
		return result, nil
	}
	page["tools"], _ = json.Marshal(kept)
	out, err := json.Marshal(page)
	if err != nil {
		return result, nil
	}
	return out, leftOut
}

// maxToolDepth is the deepest a listed tool may nest: the SDK refuses a message nested deeper than
// 1,000 levels, and a tool sits three levels down in its page's message (message, result, tools).
const maxToolDepth = 1000 - 3

// toolError says why the SDK cannot read the listed tool raw, or "" when it can. The SDK's decoder
// matches keys exactly, and encoding/json ignores case: a key that differs from a field's only in
// case ("Title") is one the SDK skips, so it is dropped before the tool is read here.
func toolError(raw json.RawMessage) string {
	if jsondepth.Deeper(raw, maxToolDepth) {
		return fmt.Sprintf("nests deeper than the %d levels a tool may hold", maxToolDepth)
	}
	var t mcp.Tool
	err := json.Unmarshal(raw, &t)
	if err == nil {
		return ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return fieldError(err)
	}
	dropped := false
	for k := range fields {
		if known, ok := toolField(k); ok && known != k {
			delete(fields, k)
			dropped = true
		}
	}
	if !dropped {
		return fieldError(err)
	}
	b, merr := json.Marshal(fields)
	if merr != nil {
		return fieldError(err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return fieldError(err)
	}
	return ""
}

// toolField returns the JSON name of mcp.Tool's field that key names, ignoring case as
// encoding/json does, and whether there is one.
func toolField(key string) (string, bool) {
	t := reflect.TypeFor[mcp.Tool]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && strings.EqualFold(name, key) {
			return name, true
		}
	}
	return "", false
}

// toolName is ` ("name")` for a tool whose name reads as a string, for the reader to find it.
func toolName(raw json.RawMessage) string {
	var t struct {
		Name json.RawMessage `json:"name"`
	}
	var name string
	if json.Unmarshal(raw, &t) != nil || json.Unmarshal(t.Name, &name) != nil || name == "" {
		return ""
	}
	if len(name) > 64 {
		name = strings.ToValidUTF8(name[:64], "") + "…"
	}
	return " (" + strconv.Quote(name) + ")"
}

// fieldError says, in JSON terms, why a value did not decode: the field and the kind of value
// it must have, with no Go type in it.
func fieldError(err error) string {
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &ute) {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return "not valid JSON"
		}
		return "cannot be read"
	}
	want := jsonKind(ute.Type)
	if ute.Field == "" {
		return "must be " + want
	}
	return fmt.Sprintf("%q must be %s", jsonPath(ute.Field), want)
}

// jsonPath writes a decoder's dotted field path ("content.0.text") as one reads JSON
// ("content[0].text").
func jsonPath(field string) string {
	var b strings.Builder
	for i, part := range strings.Split(field, ".") {
		if _, err := strconv.Atoi(part); err == nil && i > 0 {
			b.WriteString("[" + part + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return b.String()
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a value"
}

// malformedResult reports, for the error of a tools/call, whether the SDK could not read the
// server's result, and why in JSON terms. The SDK returns its decoder's error (Go types in it)
// or one of its content errors, which have no sentinel: their texts are matched.
func malformedResult(err error) (why string, ok bool) {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		if ute.Field == "" {
			return "the result must be an object", true
		}
		return fieldError(err), true
	}
	msg := err.Error()
	switch {
	case strings.HasSuffix(msg, ": nil content"):
		return `every item of "content" must be an object`, true
	case strings.Contains(msg, ": unrecognized content type "):
		_, kind, _ := strings.Cut(msg, ": unrecognized content type ")
		return `"content" holds an item of the unknown type ` + kind, true
	}
	return "", false
}

// noteLeftOut is told, on the connection's reading goroutine, of the tools a page of the
// listing under way left out.
func (d *downstream) noteLeftOut(reasons []string) {
	reasons = d.scrubAll(reasons) // a tool's name is the server's text, and may echo a secret
	for _, why := range reasons {
		d.log.Warn("mcp server listed a tool that cannot be read; leaving it out", "why", why)
	}
	d.mu.Lock()
	d.pageLeftOut = append(d.pageLeftOut, reasons...)
	d.mu.Unlock()
}

// takeLeftOut returns what noteLeftOut gathered, and starts again.
func (d *downstream) takeLeftOut() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	left := d.pageLeftOut
	d.pageLeftOut = nil
	return left
}

func (d *downstream) scrubAll(texts []string) []string {
	out := make([]string, len(texts))
	for i, s := range texts {
		out[i] = d.scrub.replace(s)
	}
	return out
}
