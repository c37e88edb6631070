package toolsearch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// kind is the JSON type of a value.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

func (k kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// value is a parsed JSON value that keeps object members in document order: schema property order
// and argument key order decide the order of hints and validation messages, as in JavaScript.
type value struct {
	kind    kind
	boolean bool
	num     json.Number
	str     string
	arr     []*value
	obj     []member
	// index maps keys to positions in obj once obj is large (indexedMembers), so that reading
	// or building an object of many keys, which a model or code can send, is not quadratic.
	// Only set maintains it; an object built otherwise starts without one.
	index map[string]int
}

// indexedMembers is the size from which an object keeps an index of its keys.
const indexedMembers = 32

type member struct {
	key string
	val *value
}

// maxDepth bounds nesting so that a hostile schema or argument cannot exhaust the stack.
const maxDepth = 256

var errTooDeep = errors.New("nesting too deep")

// parseValue parses one JSON document. Duplicate keys keep their first position and last value,
// as JSON.parse does.
func parseValue(data []byte) (*value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (*value, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	switch t := tok.(type) {
	case nil:
		return &value{kind: kNull}, nil
	case bool:
		return &value{kind: kBool, boolean: t}, nil
	case json.Number:
		return &value{kind: kNumber, num: t}, nil
	case string:
		return &value{kind: kString, str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := &value{kind: kArray, arr: []*value{}}
			for dec.More() {
				el, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, el)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			return v, nil
		case '{':
			v := &value{kind: kObject, obj: []member{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("invalid JSON: %w", err)
				}
				key, _ := kt.(string)
				el, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.set(key, el)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			return v, nil
		}
	}
	return nil, errors.New("invalid JSON")
}

// get returns the member value for key, or nil.
func (v *value) get(key string) *value {
	if v == nil || v.kind != kObject {
		return nil
	}
	if i, ok := v.find(key); ok {
		return v.obj[i].val
	}
	return nil
}

// find returns the position of key in obj.
func (v *value) find(key string) (int, bool) {
	if v.index != nil && len(v.index) == len(v.obj) {
		i, ok := v.index[key]
		return i, ok
	}
	for i := range v.obj {
		if v.obj[i].key == key {
			return i, true
		}
	}
	return -1, false
}

// has reports whether the object has key (even with a null value).
func (v *value) has(key string) bool { return v.get(key) != nil }

func (v *value) set(key string, el *value) {
	if i, ok := v.find(key); ok {
		v.obj[i].val = el
		return
	}
	v.obj = append(v.obj, member{key, el})
	switch {
	case v.index != nil && len(v.index) == len(v.obj)-1:
		v.index[key] = len(v.obj) - 1
	case len(v.obj) >= indexedMembers:
		v.index = make(map[string]int, 2*len(v.obj))
		for i, m := range v.obj {
			v.index[m.key] = i
		}
	}
}

func (v *value) isObject() bool { return v != nil && v.kind == kObject }
func (v *value) isNull() bool   { return v == nil || v.kind == kNull }

// float returns the number as float64 and whether it is a finite number.
func (v *value) float() (float64, bool) {
	if v == nil || v.kind != kNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v.num), 64)
	return f, err == nil && !math.IsInf(f, 0)
}

// isInteger reports whether the value is a number with no fractional part (JS Number.isInteger).
func (v *value) isInteger() bool {
	f, ok := v.float()
	return ok && f == math.Trunc(f)
}

// marshal writes the value as compact JSON, keeping member order.
func (v *value) marshal() []byte {
	var b []byte
	return v.appendJSON(b)
}

func (v *value) appendJSON(b []byte) []byte {
	switch v.kind {
	case kNull:
		return append(b, "null"...)
	case kBool:
		return strconv.AppendBool(b, v.boolean)
	case kNumber:
		return append(b, v.num...)
	case kString:
		return appendJSString(b, v.str)
	case kArray:
		b = append(b, '[')
		for i, el := range v.arr {
			if i > 0 {
				b = append(b, ',')
			}
			b = el.appendJSON(b)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, m := range v.obj {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSString(b, m.key)
			b = append(b, ':')
			b = m.val.appendJSON(b)
		}
		return append(b, '}')
	}
}

// appendJSString appends s as a JSON string the way JSON.stringify writes it: only quotes,
// backslashes and control characters are escaped; '<', '>', '&' and non-ASCII text stay as they
// are, so sizes measured here are the sizes a JavaScript client would see.
func appendJSString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+w]...)
		}
		i += w
	}
	return append(b, '"')
}

// jsString returns s as a JSON string literal.
func jsString(s string) string { return string(appendJSString(nil, s)) }

// utf16Len is the length of s in UTF-16 code units, the unit of JavaScript's String.length, which
// the reference budgets count in.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// collapseSpace replaces every run of white space with one space and trims the ends.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// marshalJS encodes v as JSON without HTML escaping. With pretty it indents by two spaces, like
// JSON.stringify(v, null, 2).
func marshalJS(v any, pretty bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// rawOrNull returns raw, or the JSON null when raw is empty.
func rawOrNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// maxPrettyBytes bounds the indented text of a result that carries JSON nodmix did not write: a
// tool_search_code value, a tool's details, a tool's schema. Indentation costs two spaces per
// level on every line, so a value nested a few hundred levels deep and repeated grows several
// hundredfold (a 1 MiB code result, 500 levels deep, to 500 MiB). Over the bound the text is
// the compact JSON: the same value, readable all the same.
const maxPrettyBytes = 8 << 20

// marshalReadable is marshalJS(v, true), or marshalJS(v, false) when the indented text would be
// over maxPrettyBytes.
func marshalReadable(v any) ([]byte, error) {
	compact, err := marshalJS(v, false)
	if err != nil {
		return nil, err
	}
	size := prettySize(compact, maxPrettyBytes)
	if size > maxPrettyBytes {
		return compact, nil
	}
	var buf bytes.Buffer
	buf.Grow(size)
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// prettySize is the length of compact JSON indented by two spaces, as json.Indent writes it,
// counted without writing it; past limit it stops counting and returns a size over limit.
func prettySize(compact []byte, limit int) int {
	size, depth := len(compact), 0
	inString, escaped := false, false
	for i := 0; i < len(compact) && size <= limit; i++ {
		c := compact[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if i+1 < len(compact) && (compact[i+1] == '}' || compact[i+1] == ']') {
				i++ // an empty one stays as it is
				continue
			}
			depth++
			size += 1 + 2*depth // a newline and the indentation of the first member
		case '}', ']':
			depth--
			size += 1 + 2*depth
		case ',':
			size += 1 + 2*depth
		case ':':
			size++ // the space after it
		}
	}
	return size
}
