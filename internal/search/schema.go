package search

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// SchemaKeys returns the sorted top-level property names of a decoded JSON schema (as
// encoding/json decodes into any), or nil when it has no properties object: the seed's
// schemaKeys.
func SchemaKeys(schema any) []string {
	obj, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	props, ok := obj["properties"].(map[string]any)
	if !ok || len(props) == 0 {
		return nil
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// maxSchemaTextDepth bounds the schema walk as the reference does; it also bounds
// self-referencing values built in memory.
const maxSchemaTextDepth = 4

// SchemaText collects the words a decoded JSON schema offers a search index: the
// description of every node and every property name, through properties, items,
// anyOf, oneOf and allOf, at most 4 levels deep (the reference's readParameterText).
// const and enum values are data, not descriptions, and are skipped. Properties are
// visited in sorted order, since a decoded Go map has no other; a bag-of-words index
// does not see the difference.
func SchemaText(schema any) string {
	var parts []string
	collectSchemaText(schema, 0, &parts)
	return strings.Join(parts, " ")
}

func collectSchemaText(node any, depth int, parts *[]string) {
	obj, ok := node.(map[string]any)
	if depth > maxSchemaTextDepth || !ok {
		return
	}
	if d, ok := obj["description"].(string); ok && d != "" {
		*parts = append(*parts, d)
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if name != "" {
				*parts = append(*parts, name)
			}
			collectSchemaText(props[name], depth+1, parts)
		}
	}
	for _, kw := range [...]string{"items", "anyOf", "oneOf", "allOf"} {
		switch v := obj[kw].(type) {
		case []any:
			for _, child := range v {
				collectSchemaText(child, depth+1, parts)
			}
		default:
			collectSchemaText(v, depth+1, parts)
		}
	}
}

// utf16Len is JavaScript's string length of s.
func utf16Len(s string) int {
	if isASCII(s) {
		return len(s)
	}
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 { // eight bytes at a time: words and parts are checked often
		if read64(s, i)&swarHigh != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
