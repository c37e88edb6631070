// Package json5 parses JSON5 into a tree that remembers where every value sits in the source, so
// that configuration edits can be made in place without disturbing the user's comments and layout.
package json5

import (
	"math"
	"strconv"
)

// Kind is the type of a JSON5 value.
type Kind uint8

// The kinds of values.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{Null: "null", Bool: "a boolean", Number: "a number", String: "a string", Array: "an array", Object: "an object"}

// String describes the kind for messages ("a boolean", "an object").
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Node is one parsed value. Offsets are byte offsets into the source that was parsed; the value's
// text is src[Start:End], which for containers runs from the opening to the closing bracket.
// A Node is immutable once Parse returns and may be read from several goroutines.
type Node struct {
	Kind       Kind
	Start, End int
	// Comma is the offset of the comma that follows this value inside its parent container, or -1.
	Comma int

	Bool bool    // Bool
	Num  float64 // Number: the value, ±Inf and NaN included
	Str  string  // String: the decoded text

	Members []*Member // Object, in source order; duplicates are kept
	Elems   []*Node   // Array
}

// Member is one key/value pair of an object.
type Member struct {
	Key              string // decoded
	KeyStart, KeyEnd int
	// KeyQuote is the quote the key was written with: '"', '\'' or 0 for an identifier.
	KeyQuote byte
	Value    *Node
}

// Get returns the effective member named key: the last one, as in JSON, where a later duplicate wins.
func (n *Node) Get(key string) *Member {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i := len(n.Members) - 1; i >= 0; i-- {
		if n.Members[i].Key == key {
			return n.Members[i]
		}
	}
	return nil
}

// IsInt reports whether the node is a finite number with no fractional part that fits an int.
func (n *Node) IsInt() bool {
	if n == nil || n.Kind != Number || math.IsInf(n.Num, 0) || math.IsNaN(n.Num) {
		return false
	}
	return n.Num == math.Trunc(n.Num) && n.Num >= math.MinInt64 && n.Num < math.MaxInt64
}

// Interface returns the value the way encoding/json decodes into an `any`: map[string]any,
// []any, float64, string, bool or nil. A later duplicate key wins.
func (n *Node) Interface() any {
	switch n.Kind {
	case Bool:
		return n.Bool
	case Number:
		return n.Num
	case String:
		return n.Str
	case Array:
		out := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			out[i] = e.Interface()
		}
		return out
	case Object:
		out := make(map[string]any, len(n.Members))
		for _, m := range n.Members {
			out[m.Key] = m.Value.Interface()
		}
		return out
	}
	return nil
}

// Finite reports whether the value contains no Infinity or NaN anywhere, that is whether it has
// a JSON rendering. When it does not, path is the location of the first offending number.
func (n *Node) Finite() (path []string, ok bool) {
	switch n.Kind {
	case Number:
		if math.IsInf(n.Num, 0) || math.IsNaN(n.Num) {
			return nil, false
		}
	case Array:
		for i, e := range n.Elems {
			if p, ok := e.Finite(); !ok {
				return append([]string{strconv.Itoa(i)}, p...), false
			}
		}
	case Object:
		for _, m := range n.Members {
			if p, ok := m.Value.Finite(); !ok {
				return append([]string{m.Key}, p...), false
			}
		}
	}
	return nil, true
}

// ReplaceFunc lets a renderer substitute a value: given the path of a node relative to the
// rendered root and the containers on the way (parents[i] holds path[i]; parents[0] is the
// rendered root), it returns replacement text (already valid JSON) and true, or false to render
// as is. The parents spare a caller looking them up again, which costs a scan of each object.
type ReplaceFunc func(path []string, parents []*Node, n *Node) ([]byte, bool)

// AppendJSON appends n as JSON text to dst. indent "" gives compact output; otherwise members and
// elements go on their own lines. Members keep their source order; of duplicate keys only the last
// is rendered. Non-finite numbers render as the JSON5 tokens Infinity, -Infinity and NaN, so
// callers that need strict JSON check Finite first. src is the text n was parsed from; it is
// used to keep the spelling of numbers that are already valid JSON.
func AppendJSON(dst []byte, src []byte, n *Node, indent string, replace ReplaceFunc) []byte {
	w := jsonWriter{src: src, indent: indent, replace: replace, limit: -1}
	return w.value(dst, n, nil, 0)
}

// AppendJSONUpTo is AppendJSON that gives up, returning false, once the text it appends passes
// limit bytes. Indentation grows with the depth of every line, so the indented text of a deeply
// nested value can be thousands of times its source (a 120 kB file indents to 700 MB); a caller
// bounds it with this and falls back to compact text, which stays near the source's size.
func AppendJSONUpTo(dst []byte, src []byte, n *Node, indent string, replace ReplaceFunc, limit int) ([]byte, bool) {
	w := jsonWriter{src: src, indent: indent, replace: replace, limit: len(dst) + limit}
	out := w.value(dst, n, nil, 0)
	if w.over {
		return dst, false
	}
	return out, true
}

type jsonWriter struct {
	src     []byte
	indent  string
	replace ReplaceFunc
	parents []*Node // the containers around the value being written
	limit   int     // length of dst past which writing stops, or -1
	over    bool    // the limit was passed: what is written is incomplete
}

func (w *jsonWriter) newline(dst []byte, depth int) []byte {
	if w.indent == "" || w.over {
		return dst
	}
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, w.indent...)
	}
	return dst
}

func (w *jsonWriter) value(dst []byte, n *Node, path []string, depth int) []byte {
	if w.limit >= 0 && len(dst) > w.limit {
		w.over = true
	}
	if w.over {
		return dst
	}
	if w.replace != nil {
		if text, ok := w.replace(path, w.parents, n); ok {
			return append(dst, text...)
		}
	}
	switch n.Kind {
	case Null:
		return append(dst, "null"...)
	case Bool:
		return strconv.AppendBool(dst, n.Bool)
	case Number:
		return appendNumber(dst, w.src, n)
	case String:
		return AppendQuote(dst, n.Str, '"')
	case Array:
		if len(n.Elems) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		w.parents = append(w.parents, n)
		for i, e := range n.Elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = w.newline(dst, depth+1)
			dst = w.value(dst, e, append(path, strconv.Itoa(i)), depth+1)
		}
		w.parents = w.parents[:len(w.parents)-1]
		dst = w.newline(dst, depth)
		return append(dst, ']')
	}
	// Object. A later duplicate wins in JSON, so only the last occurrence of a key is rendered.
	members := effectiveMembers(n)
	if len(members) == 0 {
		return append(dst, "{}"...)
	}
	dst = append(dst, '{')
	w.parents = append(w.parents, n)
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = w.newline(dst, depth+1)
		dst = AppendQuote(dst, m.Key, '"')
		dst = append(dst, ':')
		if w.indent != "" {
			dst = append(dst, ' ')
		}
		dst = w.value(dst, m.Value, append(path, m.Key), depth+1)
	}
	w.parents = w.parents[:len(w.parents)-1]
	dst = w.newline(dst, depth)
	return append(dst, '}')
}

// effectiveMembers drops members that a later duplicate overrides.
func effectiveMembers(n *Node) []*Member {
	dup := false
	seen := make(map[string]struct{}, len(n.Members))
	for _, m := range n.Members {
		if _, ok := seen[m.Key]; ok {
			dup = true
			break
		}
		seen[m.Key] = struct{}{}
	}
	if !dup {
		return n.Members
	}
	// Keep each key where it last occurs, found through one map rather than a search of
	// the members for each of them, which is quadratic in an object of many duplicates.
	last := make(map[string]int, len(seen))
	for i, m := range n.Members {
		last[m.Key] = i
	}
	out := make([]*Member, 0, len(last))
	for i, m := range n.Members {
		if last[m.Key] == i {
			out = append(out, m)
		}
	}
	return out
}

func appendNumber(dst []byte, src []byte, n *Node) []byte {
	switch {
	case math.IsNaN(n.Num):
		return append(dst, "NaN"...)
	case math.IsInf(n.Num, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(n.Num, -1):
		return append(dst, "-Infinity"...)
	}
	if n.Start >= 0 && n.End <= len(src) && n.Start < n.End {
		if raw := src[n.Start:n.End]; isJSONNumber(raw) {
			return append(dst, raw...)
		}
	}
	return strconv.AppendFloat(dst, n.Num, 'g', -1, 64)
}

// isJSONNumber reports whether b is a number as JSON (RFC 8259) spells it.
func isJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i == len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// AppendQuote appends s as a string literal delimited by quote (a double or a single quote), escaping what JSON
// requires plus U+2028/U+2029 and the C1 controls (a terminal shown U+009B starts an escape
// sequence, as ESC does); with '"' the result is valid JSON.
func AppendQuote(dst []byte, s string, quote byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029:
			dst = append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		default:
			dst = append(dst, string(r)...)
		}
	}
	return append(dst, quote)
}
