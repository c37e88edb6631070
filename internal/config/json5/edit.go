package json5

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Set returns a copy of src in which the value at path is value, a single JSON5 value as text.
// An existing value has its byte range replaced. Otherwise a member is added to the deepest
// existing object on the path, with any missing objects in between created; it goes after the
// last member, indented like its siblings. Commas follow the container's style (the document's
// in an empty container or a new nested object); key quotes follow the document's.
// In an array, an index equal to the length appends. Every other byte of src is kept.
func Set(src []byte, path []string, value []byte) ([]byte, error) {
	if len(path) == 0 {
		return nil, errors.New("set: empty path")
	}
	root, err := Parse(src)
	if err != nil {
		return nil, err
	}
	vn, err := Parse(value)
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	vtext := value[vn.Start:vn.End]
	cur := root
	for i, seg := range path {
		last := i == len(path)-1
		switch cur.Kind {
		case Object:
			m := cur.Get(seg)
			if m == nil {
				return insert(src, root, cur, path[i:], vtext), nil
			}
			if last {
				return splice(src, m.Value.Start, m.Value.End, vtext), nil
			}
			cur = m.Value
		case Array:
			idx, ok := Index(seg)
			if !ok {
				return nil, fmt.Errorf("%s is an array, so %q must be an index", describePath(path[:i]), seg)
			}
			switch {
			case idx < len(cur.Elems) && last:
				return splice(src, cur.Elems[idx].Start, cur.Elems[idx].End, vtext), nil
			case idx < len(cur.Elems):
				cur = cur.Elems[idx]
			case idx == len(cur.Elems):
				return insert(src, root, cur, path[i:], vtext), nil
			default:
				return nil, fmt.Errorf("index %d is out of range (%s has %d elements)", idx, describePath(path[:i]), len(cur.Elems))
			}
		default:
			return nil, fmt.Errorf("%s is %s, not an object", describePath(path[:i]), cur.Kind)
		}
	}
	return nil, errors.New("set: path walked past its end") // not reached: the last segment returns
}

// Unset returns a copy of src without the member or array element at path: the member, its comma
// and, when it sits on lines of its own, those lines. Removing the last member of a container
// that has no trailing comma also removes the comma before it. Every occurrence of a duplicated
// key is removed, all in one pass over the text (see removeAll). A missing path gives an
// error wrapping ErrNotFound.
func Unset(src []byte, path []string) ([]byte, error) {
	if len(path) == 0 {
		return nil, errors.New("unset: empty path")
	}
	root, err := Parse(src)
	if err != nil {
		return nil, err
	}
	parent, err := Lookup(root, path[:len(path)-1])
	if err != nil {
		return nil, err
	}
	var idx []int
	key := path[len(path)-1]
	switch parent.Kind {
	case Object:
		for j, m := range parent.Members {
			if m.Key == key {
				idx = append(idx, j)
			}
		}
	case Array:
		if i, ok := Index(key); ok && i < len(parent.Elems) {
			idx = []int{i}
		}
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("%s: %w", FormatPath(path), ErrNotFound)
	}
	out := removeAll(src, parent, idx)
	// The result is parsed once, so that an edit that broke the text is never returned.
	if _, err := Parse(out); err != nil {
		return nil, err
	}
	return out, nil
}

// item is an element of a container seen uniformly: for a member, start is the key's offset.
type item struct {
	start int
	value *Node
}

func items(c *Node) []item {
	if c.Kind == Object {
		out := make([]item, len(c.Members))
		for i, m := range c.Members {
			out[i] = item{m.KeyStart, m.Value}
		}
		return out
	}
	out := make([]item, len(c.Elems))
	for i, e := range c.Elems {
		out[i] = item{e.Start, e}
	}
	return out
}

func splice(src []byte, from, to int, text []byte) []byte {
	out := make([]byte, 0, len(src)-(to-from)+len(text))
	out = append(out, src[:from]...)
	out = append(out, text...)
	return append(out, src[to:]...)
}

// style is what a document's existing text says about how new members should look.
type style struct {
	quote    byte   // key quote; 0 writes identifier keys unquoted
	trailing bool   // put a comma after the last member of a multi-line container
	unit     string // one level of indentation
	nl       string
}

func detectStyle(src []byte, root *Node) style {
	st := style{unit: "  ", nl: "\n"}
	if bytes.Contains(src, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	quoteSeen, unitSeen := false, false
	with, without := 0, 0
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Kind != Object && n.Kind != Array {
			return
		}
		its := items(n)
		if len(its) > 0 {
			lastItem := its[len(its)-1]
			if startsLine(src, lastItem.start) {
				if lastItem.value.Comma >= 0 {
					with++
				} else {
					without++
				}
				if !unitSeen {
					outer, inner := lineIndent(src, n.Start), lineIndent(src, lastItem.start)
					if len(inner) > len(outer) && strings.HasPrefix(inner, outer) {
						st.unit, unitSeen = inner[len(outer):], true
					}
				}
			}
		}
		if n.Kind == Object && len(n.Members) > 0 && !quoteSeen {
			st.quote, quoteSeen = n.Members[0].KeyQuote, true
		}
		for _, it := range its {
			walk(it.value)
		}
	}
	walk(root)
	switch {
	case with != without:
		st.trailing = with > without
	default:
		// No evidence: JSON5 files in the documentation use trailing commas; a file with
		// quoted keys is probably JSON, which does not allow them.
		st.trailing = st.quote == 0
	}
	return st
}

// lineStart returns the offset just after the line break before off.
func lineStart(src []byte, off int) int {
	for off > 0 && src[off-1] != '\n' && src[off-1] != '\r' {
		off--
	}
	return off
}

// lineIndent returns the leading spaces and tabs of the line holding off.
func lineIndent(src []byte, off int) string {
	s := lineStart(src, off)
	e := s
	for e < len(src) && (src[e] == ' ' || src[e] == '\t') {
		e++
	}
	return string(src[s:e])
}

// startsLine reports whether only spaces and tabs precede off on its line.
func startsLine(src []byte, off int) bool {
	for i := lineStart(src, off); i < off; i++ {
		if src[i] != ' ' && src[i] != '\t' {
			return false
		}
	}
	return true
}

// lineTail scans from off over spaces, tabs and comments that end on the same line. It returns
// the offset after the last comment (or off), and whether the line ends there (at a line break
// or the end of input) rather than at other text. A block comment spanning lines stops the scan.
func lineTail(src []byte, off int) (contentEnd int, eol bool) { return lineTailLive(src, off, whole) }

// afterLineBreak returns the offset after the line break at off, if there is one.
func afterLineBreak(src []byte, off int) int { return afterLineBreakLive(src, off, whole) }

// whole is the next of a text with nothing removed: every offset is live (see liveText.next).
func whole(off int) int { return off }

// lineTailLive is lineTail over a text some of whose bytes are removed: next(i) is the first
// live offset at or after i. The offsets it returns are live. A comment is never cut by a
// removal, which takes whole tokens, and there is no other '/' between values.
func lineTailLive(src []byte, off int, next func(int) int) (contentEnd int, eol bool) {
	i := next(off)
	contentEnd = i
	for i < len(src) {
		switch c := src[i]; {
		case c == ' ' || c == '\t':
			i = next(i + 1)
		case c == '\n' || c == '\r':
			return contentEnd, true
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' && src[i] != '\r' {
				i = next(i + 1)
			}
			return i, true
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 || bytes.ContainsAny(src[i+2:i+2+end], "\n\r") {
				return contentEnd, false
			}
			i = next(i + 2 + end + 2)
			contentEnd = i
		default:
			return contentEnd, false
		}
	}
	return contentEnd, true
}

// afterLineBreakLive is afterLineBreak over a text some of whose bytes are removed (see
// lineTailLive).
func afterLineBreakLive(src []byte, off int, next func(int) int) int {
	switch {
	case off < len(src) && src[off] == '\r':
		if n := next(off + 1); n < len(src) && src[n] == '\n' {
			return next(n + 1)
		}
		return next(off + 1)
	case off < len(src) && src[off] == '\n':
		return next(off + 1)
	}
	return off
}

func (st style) key(k string) string {
	if st.quote == 0 && IsIdentifier(k) {
		return k
	}
	q := st.quote
	if q == 0 {
		q = '"'
	}
	return string(AppendQuote(nil, k, q))
}

// render writes the value reached by the remaining path: nested objects around value text.
// key is empty for an array element. indent is the indentation of the line the result starts
// on; inline output stays on one line.
func (st style) render(key string, rest []string, value []byte, indent string, inline bool) string {
	var b strings.Builder
	if key != "" {
		b.WriteString(st.key(key))
		b.WriteString(": ")
	}
	if len(rest) == 0 {
		b.Write(value)
		return b.String()
	}
	inner := st.render(rest[0], rest[1:], value, indent+st.unit, inline)
	if inline {
		b.WriteString("{" + inner + "}")
		return b.String()
	}
	tc := ""
	if st.trailing {
		tc = ","
	}
	b.WriteString("{" + st.nl + indent + st.unit + inner + tc + st.nl + indent + "}")
	return b.String()
}

// insert adds path[0] (with path[1:] as nested objects) to container c, at its end.
func insert(src []byte, root, c *Node, path []string, value []byte) []byte {
	st := detectStyle(src, root)
	key := path[0]
	if c.Kind == Array {
		key = ""
	}
	its := items(c)
	if len(its) == 0 {
		indent := lineIndent(src, c.Start) + st.unit
		tc := ""
		if st.trailing {
			tc = ","
		}
		text := st.nl + indent + st.render(key, path[1:], value, indent, false) + tc
		// An empty container holds nothing but whitespace and comments. Keep the comments and
		// add the member after the last one; otherwise lay the container out afresh.
		end := c.End - 1
		for end > c.Start+1 && isASCIISpace(src[end-1]) {
			end--
		}
		if end == c.Start+1 {
			return splice(src, c.Start+1, c.End-1, []byte(text+st.nl+lineIndent(src, c.Start)))
		}
		return splice(src, end, end, []byte(text))
	}
	lastItem := its[len(its)-1]
	if !startsLine(src, lastItem.start) {
		// A container written on one line grows on that line.
		text := st.render(key, path[1:], value, "", true)
		if lastItem.value.Comma >= 0 {
			return splice(src, lastItem.value.Comma+1, lastItem.value.Comma+1, []byte(" "+text+","))
		}
		return splice(src, lastItem.value.End, lastItem.value.End, []byte(", "+text))
	}
	indent := lineIndent(src, lastItem.start)
	text := st.nl + indent + st.render(key, path[1:], value, indent, false)
	after := lastItem.value.End
	if lastItem.value.Comma >= 0 {
		after = lastItem.value.Comma + 1
		text += ","
	}
	at, _ := lineTail(src, after)
	out := splice(src, at, at, []byte(text))
	if lastItem.value.Comma < 0 {
		out = splice(out, lastItem.value.End, lastItem.value.End, []byte(","))
	}
	return out
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
