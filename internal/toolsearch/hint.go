package toolsearch

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Limits of the compact input hint (reference §2.3.4).
const (
	hintMaxChars     = 300
	hintMaxDepth     = 4
	hintMaxProps     = 16
	hintMaxPropName  = 128
	hintMaxUnion     = 5
	hintMaxEnum      = 8
	hintMaxEnumChars = 96
	hintUnknown      = "unknown"
)

var identifierRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// unsupportedKeywords make a hint incomplete: the compact form cannot express them.
var unsupportedKeywords = []string{
	"$ref", "$dynamicRef", "$recursiveRef", "allOf", "patternProperties", "unevaluatedProperties",
	"dependentSchemas", "dependencies", "if", "then", "else", "prefixItems", "unevaluatedItems",
}

// hint is a TypeScript-like rendering of a schema; complete means it says everything the schema
// says, so a model can rely on it without describing the tool.
type hint struct {
	text     string
	complete bool
}

var unknownHint = hint{text: hintUnknown}

// compactInputHint renders an input schema as a short TypeScript-like signature, for example
// `{ repository: string; title: string; mode?: "drip" | "flood" }`. Property keys sort in byte
// order (the reference uses the locale's collation; nodmix keeps the result the same everywhere).
// It returns "unknown" for what it cannot render within hintMaxChars.
func compactInputHint(schema *value) string {
	if !schema.isObject() {
		return hintUnknown
	}
	var h hint
	if t := schema.get("type"); t != nil && t.kind == kString && t.str == "object" {
		h = objectHint(schema, 0)
	} else {
		h = typeHint(schema, 0)
	}
	if utf16Len(h.text) > hintMaxChars {
		return hintUnknown
	}
	return h.text
}

func typeHint(schema *value, depth int) hint {
	if !schema.isObject() {
		return unknownHint
	}
	// The empty schema accepts anything; "unknown" is its exact rendering.
	if len(schema.obj) == 0 {
		return hint{text: hintUnknown, complete: true}
	}
	if depth >= hintMaxDepth {
		return unknownHint
	}
	if n := schema.get("nullable"); n != nil {
		norm, ok := normalizeNullable(schema, n)
		if !ok {
			return unknownHint
		}
		if norm != schema {
			return typeHint(norm, depth)
		}
	}
	finish := func(h hint) hint {
		h.complete = h.complete && !hasAny(schema, unsupportedKeywords)
		return h
	}
	if u, ok := unionHint(schema, depth); ok {
		return finish(u)
	}
	if c := schema.get("const"); c != nil {
		if lit, ok := renderPrimitive(c); ok {
			return finish(hint{text: lit, complete: true})
		}
	}
	if lu, ok := literalUnion(schema.get("enum")); ok {
		return finish(lu)
	}
	t := schema.get("type")
	if t == nil {
		return unknownHint
	}
	if t.kind == kArray {
		if len(t.arr) == 0 || len(t.arr) > hintMaxUnion {
			return unknownHint
		}
		texts := make([]string, 0, len(t.arr))
		for _, el := range t.arr {
			if el.kind != kString {
				return unknownHint
			}
			h := typeHint(withMember(schema, "type", el), depth+1)
			if !h.complete {
				return unknownHint
			}
			texts = appendUnique(texts, h.text)
		}
		return finish(hint{text: strings.Join(texts, " | "), complete: true})
	}
	if t.kind != kString {
		return unknownHint
	}
	switch t.str {
	case "integer", "number":
		return finish(hint{text: numberHint(schema, t.str == "integer"), complete: true})
	case "array":
		item := typeHint(schema.get("items"), depth+1)
		return finish(hint{text: "Array<" + item.text + ">", complete: item.complete})
	case "object":
		return finish(objectHint(schema, depth+1))
	case "string", "boolean", "null":
		return finish(hint{text: t.str, complete: true})
	}
	return unknownHint
}

// normalizeNullable turns OpenAPI's `nullable: true` into a "null" member of the type union.
func normalizeNullable(schema, nullable *value) (*value, bool) {
	if nullable.kind != kBool {
		return nil, false
	}
	t := schema.get("type")
	var types []string
	switch {
	case t != nil && t.kind == kString:
		types = []string{t.str}
	case t != nil && t.kind == kArray:
		for _, el := range t.arr {
			if el.kind != kString {
				return nil, false
			}
			types = append(types, el.str)
		}
	default:
		return nil, false
	}
	if !nullable.boolean {
		return schema, true
	}
	union := &value{kind: kArray}
	for _, s := range appendUnique(types, "null") {
		union.arr = append(union.arr, &value{kind: kString, str: s})
	}
	out := withMember(schema, "nullable", &value{kind: kBool, boolean: false})
	return withMember(out, "type", union), true
}

// withMember returns a shallow copy of the object with key set to v.
func withMember(obj *value, key string, v *value) *value {
	out := &value{kind: kObject, obj: slices.Clone(obj.obj)}
	out.set(key, v)
	return out
}

func numberHint(schema *value, integer bool) string {
	var notes []string
	if integer {
		notes = append(notes, "integer")
	}
	for _, b := range []struct{ key, op string }{
		{"minimum", ">="}, {"exclusiveMinimum", ">"}, {"maximum", "<="}, {"exclusiveMaximum", "<"},
	} {
		if f, ok := schema.get(b.key).float(); ok {
			notes = append(notes, b.op+" "+jsNumber(f))
		}
	}
	if len(notes) == 0 {
		return "number"
	}
	return "number /* " + strings.Join(notes, ", ") + " */"
}

// jsNumber formats f as JavaScript's String(number) does for the values schemas use.
func jsNumber(f float64) string {
	if math.Abs(f) >= 1e21 {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// renderPrimitive renders a literal: null, a string, a boolean or a finite number.
func renderPrimitive(v *value) (string, bool) {
	switch v.kind {
	case kNull, kBool, kString:
		return string(v.marshal()), true
	case kNumber:
		f, ok := v.float()
		if !ok {
			return "", false
		}
		return jsNumber(f), true
	}
	return "", false
}

// literalUnion renders enum values as `"a" | "b"`, when there are few and they are short.
func literalUnion(values *value) (hint, bool) {
	if values == nil || values.kind != kArray || len(values.arr) == 0 || len(values.arr) > hintMaxEnum {
		return hint{}, false
	}
	var texts []string
	for _, el := range values.arr {
		lit, ok := renderPrimitive(el)
		if !ok {
			return hint{}, false
		}
		texts = appendUnique(texts, lit)
	}
	s := strings.Join(texts, " | ")
	if utf16Len(s) > hintMaxEnumChars {
		return hint{}, false
	}
	return hint{text: s, complete: true}, true
}

func unionHint(schema *value, depth int) (hint, bool) {
	anyOf, oneOf := schema.get("anyOf"), schema.get("oneOf")
	if anyOf == nil && oneOf == nil {
		return hint{}, false
	}
	if anyOf != nil && oneOf != nil {
		return unknownHint, true
	}
	variants := anyOf
	if variants == nil {
		variants = oneOf
	}
	if variants.kind != kArray || len(variants.arr) == 0 || len(variants.arr) > hintMaxEnum {
		return unknownHint, true
	}
	// A union beside a structural shape is an intersection, which the compact form cannot say.
	for _, k := range []string{"const", "enum", "type", "properties", "required", "additionalProperties", "items"} {
		if schema.has(k) {
			return unknownHint, true
		}
	}
	consts := &value{kind: kArray}
	for _, v := range variants.arr {
		c := v.get("const")
		if c == nil || hasAny(v, unsupportedKeywords) {
			consts = nil
			break
		}
		consts.arr = append(consts.arr, c)
	}
	if consts != nil {
		if lu, ok := literalUnion(consts); ok {
			return lu, true
		}
	}
	if len(variants.arr) > hintMaxUnion {
		return unknownHint, true
	}
	var texts []string
	for _, v := range variants.arr {
		h := typeHint(v, depth+1)
		if !h.complete {
			return unknownHint, true
		}
		texts = appendUnique(texts, h.text)
	}
	return hint{text: strings.Join(texts, " | "), complete: true}, true
}

func objectHint(schema *value, depth int) hint {
	props := schema.get("properties")
	reqList := schema.get("required")
	var reqValues []*value
	if reqList != nil && reqList.kind == kArray {
		reqValues = reqList.arr
	}
	addl := schema.get("additionalProperties")
	addlFalse := addl != nil && addl.kind == kBool && !addl.boolean
	if !props.isObject() {
		hasRequired := len(reqValues) > hintMaxProps
		for _, r := range reqValues {
			if r.kind == kString {
				hasRequired = true
			}
		}
		if !hasRequired && addlFalse {
			return hint{text: "{}", complete: true}
		}
		return hint{text: "{ ... }"}
	}

	invalidRequired := false
	if len(reqValues) <= hintMaxProps {
		for _, r := range reqValues {
			if r.kind != kString {
				invalidRequired = true
			}
		}
	}
	required := map[string]bool{}
	var requiredKeys []string
	missingRequired := false
	for _, r := range reqValues[:min(len(reqValues), hintMaxProps)] {
		if r.kind != kString || required[r.str] {
			continue
		}
		required[r.str] = true
		if utf16Len(r.str) > hintMaxPropName || !props.has(r.str) {
			missingRequired = true
			continue
		}
		requiredKeys = append(requiredKeys, r.str)
	}
	slices.Sort(requiredKeys)

	optionalLimit := hintMaxProps - len(requiredKeys)
	var optionalKeys []string
	optionalCount := 0
	oversized := false
	for _, m := range props.obj {
		if required[m.key] {
			continue
		}
		optionalCount++
		if utf16Len(m.key) > hintMaxPropName {
			oversized = true
			continue
		}
		optionalKeys = append(optionalKeys, m.key)
	}
	slices.Sort(optionalKeys)
	if len(optionalKeys) > optionalLimit {
		optionalKeys = optionalKeys[:max(optionalLimit, 0)]
	}

	structurallyIncomplete := len(reqValues) > hintMaxProps || invalidRequired || missingRequired ||
		oversized || optionalCount > optionalLimit
	omitted := structurallyIncomplete || (addl != nil && ((addl.kind == kBool && addl.boolean) || addl.kind == kObject))
	complete := !structurallyIncomplete && addlFalse

	keys := append(requiredKeys, optionalKeys...)
	var parts []string
	size := 4 // "{ " and " }"
	for _, key := range keys {
		name := key
		if !identifierRE.MatchString(key) {
			name = jsString(key)
		}
		ph := typeHint(props.get(key), depth)
		complete = complete && ph.complete
		opt := "?"
		if required[key] {
			opt = ""
		}
		part := name + opt + ": " + ph.text
		next := size + utf16Len(part)
		if len(parts) > 0 {
			next += 2 // "; "
		}
		if next > hintMaxChars {
			omitted, complete = true, false
			break
		}
		parts = append(parts, part)
		size = next
	}
	if len(parts) == 0 {
		if len(keys) == 0 && !omitted {
			return hint{text: "{}", complete: complete}
		}
		return hint{text: "{ ... }"}
	}
	tail := ""
	if omitted {
		tail = "; ..."
	}
	return hint{text: "{ " + strings.Join(parts, "; ") + tail + " }", complete: complete}
}

func hasAny(v *value, keys []string) bool {
	for _, k := range keys {
		if v.has(k) {
			return true
		}
	}
	return false
}

func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
