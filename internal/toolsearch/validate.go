package toolsearch

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/levenshtein"
)

// schemaError is one way a value fails its schema. Messages follow Ajv's wording, which the
// reference shows the model; paths are dotted ("items.0.name"), "<root>" for the value itself.
type schemaError struct {
	path       string // JSON pointer of the failing value, "" for the root
	message    string
	missing    string   // for required: the missing property
	additional []string // for additionalProperties: the unexpected keys
}

func (e schemaError) text() string {
	p := strings.ReplaceAll(strings.TrimPrefix(e.path, "/"), "/", ".")
	if e.missing != "" {
		if p == "" {
			p = e.missing
		} else {
			p += "." + e.missing
		}
	}
	if p == "" {
		p = "<root>"
	}
	return p + ": " + e.message
}

// maxSchemaErrors bounds the errors collected for one value; a model gains nothing from hundreds.
const maxSchemaErrors = 20

// maxNamedKeys bounds the unexpected keys an additionalProperties error names, and the keys
// whose nearest property is suggested.
const maxNamedKeys = 10

// validator checks values against the JSON Schema subset nodmix tools use: type, nullable, enum,
// const, required, properties, additionalProperties, items, minItems/maxItems,
// minLength/maxLength, minimum/maximum and their exclusive forms, anyOf and oneOf. Other keywords
// (pattern, format, $ref, ...) are not checked: the tool itself still validates its input.
type validator struct {
	errs []schemaError
}

func validateValue(schema, v *value) []schemaError {
	var vd validator
	vd.check(schema, v, "", 0)
	return vd.errs
}

func (vd *validator) add(e schemaError) {
	if len(vd.errs) < maxSchemaErrors {
		vd.errs = append(vd.errs, e)
	}
}

func (vd *validator) check(schema, v *value, path string, depth int) {
	if schema == nil || depth > maxDepth {
		return
	}
	if schema.kind == kBool {
		if !schema.boolean {
			vd.add(schemaError{path: path, message: "boolean schema is false"})
		}
		return
	}
	if schema.kind != kObject {
		return
	}
	if types, ok := schemaTypes(schema); ok && !matchesType(types, v) {
		vd.add(schemaError{path: path, message: "must be " + strings.Join(types, ",")})
		return
	}
	switch v.kind {
	case kNumber:
		vd.checkNumber(schema, v, path)
	case kString:
		n := utf8.RuneCountInString(v.str)
		if lim, ok := limit(schema, "minLength"); ok && n < lim {
			vd.add(schemaError{path: path, message: fmt.Sprintf("must NOT have fewer than %d characters", lim)})
		}
		if lim, ok := limit(schema, "maxLength"); ok && n > lim {
			vd.add(schemaError{path: path, message: fmt.Sprintf("must NOT have more than %d characters", lim)})
		}
	case kArray:
		if lim, ok := limit(schema, "minItems"); ok && len(v.arr) < lim {
			vd.add(schemaError{path: path, message: fmt.Sprintf("must NOT have fewer than %d items", lim)})
		}
		if lim, ok := limit(schema, "maxItems"); ok && len(v.arr) > lim {
			vd.add(schemaError{path: path, message: fmt.Sprintf("must NOT have more than %d items", lim)})
		}
		if items := schema.get("items"); items != nil && items.kind != kArray {
			for i, el := range v.arr {
				vd.check(items, el, path+"/"+strconv.Itoa(i), depth+1)
			}
		}
	case kObject:
		vd.checkObject(schema, v, path, depth)
	}
	if e := schema.get("enum"); e != nil && e.kind == kArray {
		if !slices.ContainsFunc(e.arr, func(a *value) bool { return jsonEqual(a, v) }) {
			vd.add(schemaError{path: path, message: "must be equal to one of the allowed values" + allowedHint(e.arr)})
		}
	}
	if c := schema.get("const"); c != nil && !jsonEqual(c, v) {
		vd.add(schemaError{path: path, message: "must be equal to constant" + allowedHint([]*value{c})})
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		variants := schema.get(key)
		if variants == nil || variants.kind != kArray || len(variants.arr) == 0 {
			continue
		}
		passed := 0
		for _, s := range variants.arr {
			var sub validator
			sub.check(s, v, path, depth+1)
			if len(sub.errs) == 0 {
				passed++
			}
		}
		if key == "anyOf" && passed == 0 {
			vd.add(schemaError{path: path, message: "must match a schema in anyOf"})
		}
		if key == "oneOf" && passed != 1 {
			vd.add(schemaError{path: path, message: "must match exactly one schema in oneOf"})
		}
	}
}

func (vd *validator) checkNumber(schema, v *value, path string) {
	f, ok := v.float()
	if !ok {
		return
	}
	for _, b := range []struct {
		key, op string
		fails   func(x, lim float64) bool
	}{
		{"minimum", ">=", func(x, l float64) bool { return x < l }},
		{"maximum", "<=", func(x, l float64) bool { return x > l }},
		{"exclusiveMinimum", ">", func(x, l float64) bool { return x <= l }},
		{"exclusiveMaximum", "<", func(x, l float64) bool { return x >= l }},
	} {
		if lim, ok := schema.get(b.key).float(); ok && b.fails(f, lim) {
			vd.add(schemaError{path: path, message: "must be " + b.op + " " + jsNumber(lim)})
		}
	}
}

func (vd *validator) checkObject(schema, v *value, path string, depth int) {
	props := schema.get("properties")
	if req := schema.get("required"); req != nil && req.kind == kArray {
		for _, r := range req.arr {
			if r.kind == kString && !v.has(r.str) {
				vd.add(schemaError{path: path, message: fmt.Sprintf("must have required property '%s'", r.str), missing: r.str})
			}
		}
	}
	if addl := schema.get("additionalProperties"); addl != nil {
		var extra []member
		for _, m := range v.obj {
			if !props.has(m.key) {
				extra = append(extra, m)
			}
		}
		if addl.kind == kBool && !addl.boolean && len(extra) > 0 {
			// The keys a model sent that the schema does not have, the first maxNamedKeys named:
			// a call of thousands of stray keys gets an answer of a line, not of the call's size.
			keys := make([]string, 0, min(len(extra), maxNamedKeys))
			var msg strings.Builder
			msg.WriteString("must not have additional properties: ")
			for i, m := range extra[:min(len(extra), maxNamedKeys)] {
				if i > 0 {
					msg.WriteString(", ")
				}
				keys = append(keys, m.key)
				msg.WriteString(`"` + m.key + `"`)
			}
			if n := len(extra) - maxNamedKeys; n > 0 {
				fmt.Fprintf(&msg, ", and %d more", n)
			}
			vd.add(schemaError{path: path, message: msg.String(), additional: keys})
		} else if addl.kind == kObject {
			for _, m := range extra {
				vd.check(addl, m.val, path+"/"+escapePointer(m.key), depth+1)
			}
		}
	}
	if props.isObject() {
		for _, p := range props.obj {
			if el := v.get(p.key); el != nil {
				vd.check(p.val, el, path+"/"+escapePointer(p.key), depth+1)
			}
		}
	}
}

func escapePointer(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// schemaTypes returns the schema's type list, with "null" added for `nullable: true`.
func schemaTypes(schema *value) ([]string, bool) {
	t := schema.get("type")
	var types []string
	switch {
	case t == nil:
		return nil, false
	case t.kind == kString:
		types = []string{t.str}
	case t.kind == kArray:
		for _, el := range t.arr {
			if el.kind == kString {
				types = append(types, el.str)
			}
		}
	default:
		return nil, false
	}
	if n := schema.get("nullable"); n != nil && n.kind == kBool && n.boolean {
		types = appendUnique(types, "null")
	}
	return types, len(types) > 0
}

func matchesType(types []string, v *value) bool {
	for _, t := range types {
		switch t {
		case "integer":
			if v.isInteger() {
				return true
			}
		case v.kind.String():
			return true
		}
	}
	return false
}

// limit reads a non-negative integer keyword.
func limit(schema *value, key string) (int, bool) {
	f, ok := schema.get(key).float()
	if !ok || f < 0 || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// jsonEqual compares two JSON values structurally (numbers by value, objects ignoring key order).
func jsonEqual(a, b *value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kNull:
		return true
	case kBool:
		return a.boolean == b.boolean
	case kNumber:
		fa, _ := a.float()
		fb, _ := b.float()
		return fa == fb
	case kString:
		return a.str == b.str
	case kArray:
		return slices.EqualFunc(a.arr, b.arr, jsonEqual)
	default:
		if len(a.obj) != len(b.obj) {
			return false
		}
		for _, m := range a.obj {
			o := b.get(m.key)
			if o == nil || !jsonEqual(m.val, o) {
				return false
			}
		}
		return true
	}
}

// allowedHint summarizes enum values as the reference does: ` (allowed: "a", "b", ... (+N more))`.
func allowedHint(values []*value) string {
	const maxShown, maxChars = 12, 160
	var labels []string
	seen := map[string]bool{}
	for _, v := range values {
		key := v.kind.String() + ":" + string(v.marshal())
		if seen[key] {
			continue
		}
		seen[key] = true
		var label string
		if v.kind == kString {
			label = jsString(truncateHint(v.str, maxChars))
		} else {
			label = truncateHint(string(v.marshal()), maxChars)
		}
		labels = append(labels, label)
	}
	if len(labels) == 0 {
		return ""
	}
	hidden := 0
	if len(labels) > maxShown {
		hidden = len(labels) - maxShown
		labels = labels[:maxShown]
	}
	s := strings.Join(labels, ", ")
	if hidden > 0 {
		s += fmt.Sprintf(", ... (+%d more)", hidden)
	}
	return " (allowed: " + s + ")"
}

func truncateHint(s string, n int) string {
	l := utf16Len(s)
	if l <= n {
		return s
	}
	return fmt.Sprintf("%s... (+%d chars)", catalog.PrefixUTF16(s, n), l-n)
}

// inputError formats the model-facing message for arguments that fail the tool's schema:
// `Invalid arguments for tool "<id>": <errors>.[ Did you mean: x?][ Expected input: <hint>.]`
func inputError(id string, schema, args *value, errs []schemaError) string {
	props := schema.get("properties")
	var known []string
	if props.isObject() {
		for _, m := range props.obj {
			known = append(known, m.key)
		}
	}
	var unexpected []string
	if addl := schema.get("additionalProperties"); addl != nil && addl.kind == kBool && !addl.boolean && args.isObject() {
		for _, m := range args.obj {
			if len(unexpected) == maxNamedKeys {
				break
			}
			if !props.has(m.key) {
				unexpected = append(unexpected, m.key)
			}
		}
	} else {
		for _, e := range errs {
			unexpected = append(unexpected, e.additional...)
		}
	}
	var suggestions []string
	for _, u := range unexpected {
		threshold := min(3, max(1, (utf8.RuneCountInString(u)+2)/3))
		best, bestDist := "", threshold+1
		for _, k := range known {
			if d := levenshtein.AtMost(u, k, threshold); d < bestDist || (d == bestDist && best != "" && k < best) {
				best, bestDist = k, d
			}
		}
		if best != "" && bestDist <= threshold {
			suggestions = appendUnique(suggestions, best)
		}
	}
	if len(suggestions) > 3 {
		suggestions = suggestions[:3]
	}
	texts := make([]string, len(errs))
	for i, e := range errs {
		texts[i] = e.text()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Invalid arguments for tool \"%s\": %s.", id, strings.Join(texts, "; "))
	if len(suggestions) > 0 {
		fmt.Fprintf(&b, " Did you mean: %s?", strings.Join(suggestions, ", "))
	}
	if h := compactInputHint(schema); h != hintUnknown {
		fmt.Fprintf(&b, " Expected input: %s.", h)
	}
	return b.String()
}
