package search

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// SchemaFacts returns SchemaKeys and SchemaText of a JSON schema given as its raw bytes, without
// decoding it into maps: an index build reads thousands of schemas for a few strings each. It
// answers exactly what decoding with encoding/json and calling those two would (the last of
// duplicate keys wins; strings are unescaped the same way); ok is false when raw is not valid JSON.
func SchemaFacts(raw []byte) (keys []string, text string, ok bool) {
	var r SchemaReader
	return r.Facts(raw)
}

// SchemaReader is SchemaFacts with its buffers kept from one schema to the next, for a
// caller that reads many. A reader is used by one goroutine at a time.
type SchemaReader struct {
	p    rawSchema
	text textBuf
	keys []textSpan // while reading: where the root's property names are in text
}

// textSpan is a part of the text being collected: text.b[at : at+n].
type textSpan struct{ at, n int }

// Facts is SchemaFacts(raw).
func (r *SchemaReader) Facts(raw []byte) (keys []string, text string, ok bool) {
	p := &r.p
	p.b = raw
	defer func() { p.b = nil }() // keep no caller's bytes
	if valid, fit := p.scan(); !valid || !fit {
		return nil, "", false // decoding into any also fails on a number beyond float64
	}
	r.text.b, r.keys = r.text.b[:0], r.keys[:0]
	p.collect(p.value(0), 0, &r.text, &r.keys) // the root's properties are the keys
	text = string(r.text.b)
	// The text has every key's name (see collect): the keys are parts of it, not copies.
	if len(r.keys) > 0 {
		keys = make([]string, len(r.keys))
		for i, k := range r.keys {
			keys[i] = text[k.at : k.at+k.n]
		}
	}
	return keys, text, true
}

// rawSchema walks valid JSON in place. Where every value ends is found in one scan (see
// scan): the walk asks for the end of a value once per level it is nested in, and a
// lookup spares it a rescan of the value each time.
type rawSchema struct {
	b []byte
	// ends[i] is the index just after the value (or key) that starts at b[i], for every
	// value scan met; for a string, negated when it has a backslash or a byte from 0x80
	// up, that is when it may need decoding. Other entries are stale: only the starts of
	// values are read.
	ends []int32
	// mbuf holds the member lists of the objects being walked, innermost last: members
	// appends a list, and its caller truncates mbuf back once done with it.
	mbuf []member
}

// span is one JSON value of b: its first byte (kind) and extent.
type span struct {
	kind       byte // '{', '[', '"', or another byte for numbers and literals
	start, end int
}

type member struct {
	name []byte // decoded
	val  span
}

func (p *rawSchema) skipSpace(i int) int {
	for i < len(p.b) {
		switch p.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value returns the value starting at or after i.
func (p *rawSchema) value(i int) span {
	i = p.skipSpace(i)
	return span{kind: p.b[i], start: i, end: p.end(i)}
}

// end returns the index just after the value starting at i.
func (p *rawSchema) end(i int) int {
	e, _ := p.strEnd(i)
	return e
}

// strEnd returns the index just after the value starting at i, and for a string whether it
// is plain: without a backslash or a byte from 0x80 up, its bytes are what it decodes to.
func (p *rawSchema) strEnd(i int) (end int, plain bool) {
	e := p.ends[i]
	if e < 0 {
		return int(-e), false
	}
	return int(e), true
}

// str decodes a string value as encoding/json does.
func (p *rawSchema) str(s span) string {
	b := p.b[s.start+1 : s.end-1]
	if _, plain := p.strEnd(s.start); plain || (!slices.Contains(b, '\\') && utf8.Valid(b)) {
		return string(b)
	}
	var out string
	_ = json.Unmarshal(p.b[s.start:s.end], &out) // valid JSON: cannot fail
	return out
}

// eachMember calls fn with every member of the object at o, in order.
func (p *rawSchema) eachMember(o span, fn func(key, val span)) {
	i := p.skipSpace(o.start + 1)
	for i < o.end && p.b[i] == '"' {
		key := span{kind: '"', start: i, end: p.end(i)}
		i = p.skipSpace(key.end) + 1 // past ':'
		val := p.value(i)
		fn(key, val)
		i = p.skipSpace(val.end)
		if i < o.end && p.b[i] == ',' {
			i = p.skipSpace(i + 1)
		}
	}
}

// members returns the members of the object at o by name, sorted, each with its last value.
// The list is at the end of p.mbuf; see mbuf.
func (p *rawSchema) members(o span) []member {
	base := len(p.mbuf)
	p.eachMember(o, func(k, v span) {
		p.mbuf = append(p.mbuf, member{name: p.strBytes(k), val: v})
	})
	out := p.mbuf[base:]
	// A stable sort keeps duplicates in document order; the last of each is the one kept.
	slices.SortStableFunc(out, func(a, b member) int { return bytes.Compare(a.name, b.name) })
	kept := out[:0]
	for i, m := range out {
		if i+1 < len(out) && bytes.Equal(out[i+1].name, m.name) {
			continue
		}
		kept = append(kept, m)
	}
	return kept
}

// strBytes is str without a copy when the string needs no decoding: the bytes are b's.
func (p *rawSchema) strBytes(s span) []byte {
	b := p.b[s.start+1 : s.end-1]
	// No escapes, no multi-byte runes: the common case, known from the scan.
	if _, plain := p.strEnd(s.start); plain || (!slices.Contains(b, '\\') && utf8.Valid(b)) {
		return b
	}
	return []byte(p.str(s))
}

// textBuf collects SchemaText's parts joined by spaces.
type textBuf struct{ b []byte }

func (t *textBuf) add(part []byte) {
	if len(t.b) > 0 {
		t.b = append(t.b, ' ')
	}
	t.b = append(t.b, part...)
}

// collect is collectSchemaText over raw JSON.
// With keys, where the names of node's properties are in text, sorted, go there.
func (p *rawSchema) collect(node span, depth int, text *textBuf, keys *[]textSpan) {
	if depth > maxSchemaTextDepth || node.kind != '{' {
		return
	}
	var desc, props span
	var kws [4]span
	var has [6]bool
	p.eachMember(node, func(k, v span) {
		switch string(p.strBytes(k)) { // a key is decoded once, whatever it is compared with
		case "description":
			desc, has[0] = v, true
		case "properties":
			props, has[1] = v, true
		case "items":
			kws[0], has[2] = v, true
		case "anyOf":
			kws[1], has[3] = v, true
		case "oneOf":
			kws[2], has[4] = v, true
		case "allOf":
			kws[3], has[5] = v, true
		}
	})
	if has[0] && desc.kind == '"' {
		if d := p.strBytes(desc); len(d) > 0 {
			text.add(d)
		}
	}
	if has[1] && props.kind == '{' {
		base := len(p.mbuf)
		members := p.members(props) // nested walks append to mbuf past them
		for _, m := range members {
			if len(m.name) > 0 {
				text.add(m.name)
			}
			if keys != nil { // an empty name is empty wherever it is
				*keys = append(*keys, textSpan{at: len(text.b) - len(m.name), n: len(m.name)})
			}
			p.collect(m.val, depth+1, text, nil)
		}
		p.mbuf = p.mbuf[:base]
	}
	for j := range kws {
		if !has[2+j] {
			continue
		}
		v := kws[j]
		if v.kind != '[' {
			p.collect(v, depth+1, text, nil)
			continue
		}
		i := p.skipSpace(v.start + 1)
		for i < v.end && p.b[i] != ']' {
			child := p.value(i)
			p.collect(child, depth+1, text, nil)
			i = p.skipSpace(child.end)
			if i < v.end && p.b[i] == ',' {
				i++
			}
		}
	}
}
