package tokenjuice

import (
	"bytes"
	"fmt"
	"strings"
)

// JSON documents (npm view --json, go list -json, an API's answer through curl, jq's output, JSON
// lines) are outlined whatever the command: every top-level scalar field is shown as written, a
// small container is shown whole on one line, a larger one as its size with its first and last
// members and its outliers (an element whose field has a value the others do not share: the one
// failing check among passing ones). The text shown is cut from the document itself, so that a
// field reads exactly as the tool printed it.

const (
	// jsonMaxBytes bounds the documents parsed (a node costs about 70 bytes, a number in an array
	// of them two); larger ones go to the generic reducer, which streams.
	jsonMaxBytes   = 1 << 20
	jsonMaxDepth   = 64
	jsonMemberRoom = 160 // characters of one top-level member's line
	jsonItemRoom   = 240 // characters of one element of a top-level array
	jsonScalarMax  = 320 // a longer string is cut in the middle
	jsonOutliers   = 4   // outliers shown per array
	jsonTopItems   = 3   // elements shown at each end of a top-level array or sequence
	jsonTopBudget  = 12000
)

var jsonRule = &rule{id: "json", family: "structured", match: func(*command, *simple) bool { return false }, reduce: reduceJSON}

// jnode is a parsed JSON value: its kind ('{', '[', '"', or 'v' for numbers and literals) and its
// span in the document; containers hold their members (objects: keySpan is from the key's opening
// quote to the value's start, so that `"key": ` keeps its spacing).
type jnode struct {
	kind       byte
	start, end int
	keys       [][2]int
	kids       []*jnode
}

type jsonParser struct {
	b     []byte
	depth int
}

func (p *jsonParser) ws(i int) int {
	for i < len(p.b) && (p.b[i] == ' ' || p.b[i] == '\t' || p.b[i] == '\n' || p.b[i] == '\r') {
		i++
	}
	return i
}

// value parses the value at b[i:] (after whitespace); ok is false on malformed input.
func (p *jsonParser) value(i int) (*jnode, int, bool) {
	i = p.ws(i)
	if i >= len(p.b) {
		return nil, i, false
	}
	switch c := p.b[i]; {
	case c == '{' || c == '[':
		if p.depth++; p.depth > jsonMaxDepth {
			return nil, i, false
		}
		defer func() { p.depth-- }()
		n := &jnode{kind: c, start: i}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		j := p.ws(i + 1)
		if j < len(p.b) && p.b[j] == closer {
			n.end = j + 1
			return n, j + 1, true
		}
		for {
			j = p.ws(j)
			var keyStart int
			if c == '{' {
				if j >= len(p.b) || p.b[j] != '"' {
					return nil, j, false
				}
				keyStart = j
				k, ok := p.str(j)
				if !ok {
					return nil, j, false
				}
				k = p.ws(k)
				if k >= len(p.b) || p.b[k] != ':' {
					return nil, k, false
				}
				j = p.ws(k + 1)
			}
			kid, next, ok := p.value(j)
			if !ok {
				return nil, next, false
			}
			if c == '{' {
				n.keys = append(n.keys, [2]int{keyStart, kid.start})
			}
			n.kids = append(n.kids, kid)
			j = p.ws(next)
			if j >= len(p.b) {
				return nil, j, false
			}
			if p.b[j] == closer {
				n.end = j + 1
				return n, j + 1, true
			}
			if p.b[j] != ',' {
				return nil, j, false
			}
			j++
		}
	case c == '"':
		end, ok := p.str(i)
		return &jnode{kind: '"', start: i, end: end}, end, ok
	default:
		j := i
		for j < len(p.b) && (p.b[j] >= 'a' && p.b[j] <= 'z' || p.b[j] >= '0' && p.b[j] <= '9' || strings.IndexByte("+-.E", p.b[j]) >= 0) {
			j++
		}
		if j == i {
			return nil, i, false
		}
		switch w := string(p.b[i:j]); {
		case w == "true", w == "false", w == "null", w[0] == '-' || w[0] >= '0' && w[0] <= '9':
		default:
			return nil, i, false
		}
		return &jnode{kind: 'v', start: i, end: j}, j, true
	}
}

// str returns the index after the string starting at b[i] == '"'.
func (p *jsonParser) str(i int) (int, bool) {
	for j := i + 1; j < len(p.b); j++ {
		switch p.b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		case '\n':
			return j, false
		}
	}
	return len(p.b), false
}

// looksJSON is the cheap test before parsing: the output starts with a bracket.
func looksJSON(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 1 && (t[0] == '{' || t[0] == '[') && len(b) <= jsonMaxBytes
}

// parseJSONValues parses a document, or a sequence of them (JSON lines, jq's output). It returns
// nil unless the whole output is JSON holding at least one container.
func parseJSONValues(b []byte) []*jnode {
	t := bytes.TrimSpace(b)
	if len(t) < 2 || len(b) > jsonMaxBytes || t[0] != '{' && t[0] != '[' {
		return nil
	}
	p := &jsonParser{b: b}
	var vals []*jnode
	for i := p.ws(0); i < len(b); i = p.ws(i) {
		v, next, ok := p.value(i)
		if !ok {
			return nil
		}
		vals = append(vals, v)
		i = next
	}
	return vals
}

// reduceJSON outlines a JSON document or a sequence of documents.
func reduceJSON(d *doc) (string, bool) {
	vals := d.json
	if vals == nil {
		vals = parseJSONValues(d.raw)
	}
	if vals == nil {
		return "", false
	}
	r := &jsonRender{b: d.raw}
	var out []string
	switch {
	case len(vals) == 1 && vals[0].kind == '{':
		out = r.object(vals[0])
	case len(vals) == 1:
		out = r.array(vals[0].kids, "array")
	default:
		out = r.array(vals, "JSON values")
	}
	return strings.Join(out, "\n"), true
}

type jsonRender struct{ b []byte }

// text is n's text with its line breaks and indentation folded into single spaces.
func (r *jsonRender) text(n *jnode) string { return foldSpace(r.b[n.start:n.end]) }

// foldSpace replaces each run of whitespace holding a line break by one space (none after an
// opening or before a closing bracket), outside strings: a string cannot hold a raw line break.
func foldSpace(b []byte) string {
	if bytes.IndexByte(b, '\n') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\n' && c != '\r' {
			out = append(out, c)
			continue
		}
		out = bytes.TrimRight(out, " \t")
		j := i
		for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
			j++
		}
		if j < len(b) && b[j] != '}' && b[j] != ']' && len(out) > 0 && out[len(out)-1] != '{' && out[len(out)-1] != '[' {
			out = append(out, ' ')
		}
		i = j - 1
	}
	return string(out)
}

// key is a member's key as written, with its colon and the spacing after it.
func (r *jsonRender) key(span [2]int) string { return foldSpace(r.b[span[0]:span[1]]) }

// object renders a top-level object: one line per member. An object with more members than fit
// jsonTopBudget is a map rather than a record (ids to entries): its lines are sampled like a
// listing's.
func (r *jsonRender) object(n *jnode) []string {
	lines := make([]string, len(n.kids))
	for i, kid := range n.kids {
		k := r.key(n.keys[i])
		lines[i] = "  " + k + r.summary(kid, jsonMemberRoom-charCount(k))
	}
	return append([]string{fmt.Sprintf("{%s}", plural(len(n.kids), "key"))}, sample(lines, jsonTopBudget, "keys")...)
}

// array renders a top-level array or sequence: its size, its first and last elements, and its
// outliers, one per line.
func (r *jsonRender) array(items []*jnode, what string) []string {
	out := []string{fmt.Sprintf("[%s %s]", group(len(items)), what)}
	show := make([]bool, len(items))
	for i := range items {
		if i < jsonTopItems || i >= len(items)-jsonTopItems {
			show[i] = true
		}
	}
	for _, i := range outliers(r.b, items) {
		show[i] = true
	}
	gap := 0
	for i, it := range items {
		if !show[i] {
			gap++
			continue
		}
		if gap > 0 {
			out = append(out, "  "+gapLine(gap, "items"))
			gap = 0
		}
		out = append(out, fmt.Sprintf("  [%d] %s", i, r.summary(it, jsonItemRoom)))
	}
	return out
}

// summary renders n on one line within about room characters: a scalar as written (a long string
// cut in the middle), a container whole if it fits, else its size and as many of its first
// members as fit, its last member, and its outliers.
func (r *jsonRender) summary(n *jnode, room int) string {
	if n.kind == '"' || n.kind == 'v' {
		return clip(string(r.b[n.start:n.end]), max(jsonScalarMax, room))
	}
	// Folding whitespace shrinks a pretty-printed container by its indentation, rarely by more
	// than a factor of eight: a longer one is not folded only to be measured.
	if n.end-n.start <= 8*room {
		if t := r.text(n); charCount(t) <= room {
			return t
		}
	}
	room = max(room, 40)
	var sb strings.Builder
	unit := "item"
	if n.kind == '{' {
		unit = "key"
	}
	open, closer := "[", "]"
	if n.kind == '{' {
		open, closer = "{", "}"
	}
	fmt.Fprintf(&sb, "%s%s: ", open, plural(len(n.kids), unit))
	show := make([]bool, len(n.kids))
	if n.kind == '[' {
		for _, i := range outliers(r.b, n.kids) {
			show[i] = true
		}
	}
	last := len(n.kids) - 1
	left := room - charCount(sb.String()) - 8
	parts := make([]string, len(n.kids))
	render := func(i, share int) string {
		if parts[i] == "" {
			s := r.summary(n.kids[i], share)
			if n.kind == '{' {
				s = r.key(n.keys[i]) + s
			}
			parts[i] = s
		}
		return parts[i]
	}
	// The last member and the outliers are promised their room first; the first members fill the
	// rest in order.
	reserve := 0
	if last == 0 {
		render(0, left)
		show[0] = true
	}
	if last > 0 {
		reserve += charCount(render(last, left/3)) + 2
		show[last] = true
	}
	for i, s := range show {
		if s && i != last {
			reserve += charCount(render(i, max(left/4, 160))) + 2
		}
	}
	room2 := left - reserve
	for i := 0; i < last; i++ {
		if show[i] {
			continue
		}
		c := charCount(render(i, max(room2/2, 24))) + 2
		if c > room2 && i > 0 {
			break
		}
		show[i] = true
		room2 -= c
	}
	gap := 0
	first := true
	for i := range n.kids {
		if !show[i] {
			gap++
			continue
		}
		if !first {
			sb.WriteString(", ")
		}
		first = false
		if gap > 0 {
			fmt.Fprintf(&sb, "…%d more…, ", gap)
			gap = 0
		}
		sb.WriteString(render(i, 0))
	}
	sb.WriteString(closer)
	return sb.String()
}

// outliers returns the indexes of the elements of an array of objects whose value for some key
// differs from the value most of them share: the failing check among passing ones, the one
// package that is not installed. Keys whose values mostly differ (ids, timings) say nothing.
func outliers(b []byte, items []*jnode) []int {
	if len(items) < 5 {
		return nil
	}
	type tally struct {
		counts map[string]int
		n      int
	}
	keys := map[string]*tally{}
	var order []string
	for _, it := range items {
		if it.kind != '{' {
			return nil
		}
		for k, kid := range it.kids {
			if kid.kind != '"' && kid.kind != 'v' {
				continue
			}
			name := string(b[it.keys[k][0]:it.keys[k][1]])
			t := keys[name]
			if t == nil {
				t = &tally{counts: map[string]int{}}
				keys[name] = t
				order = append(order, name)
			}
			t.counts[string(b[kid.start:kid.end])]++
			t.n++
		}
	}
	odd := map[int]bool{}
	var out []int
	for _, name := range order {
		t := keys[name]
		top := 0
		for _, c := range t.counts {
			top = max(top, c)
		}
		if top*5 < t.n*4 || top == t.n {
			continue // no value most share, or all share it
		}
		for i, it := range items {
			for k, kid := range it.kids {
				if string(b[it.keys[k][0]:it.keys[k][1]]) != name || kid.kind != '"' && kid.kind != 'v' {
					continue
				}
				if c := t.counts[string(b[kid.start:kid.end])]; c < top && c*10 <= t.n && !odd[i] && len(out) < jsonOutliers {
					odd[i] = true
					out = append(out, i)
				}
			}
		}
	}
	return out
}
