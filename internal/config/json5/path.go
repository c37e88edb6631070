package json5

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrNotFound is returned when a path names nothing in the document.
var ErrNotFound = errors.New("not found")

// ParsePath splits a dotted path such as "plugins.entries.tavily.enabled". An array index may be
// written as its own segment ("agents.list.0.id") or in brackets ("agents.list[0].id"); both
// spellings give the same segments. A key holding a dot or a bracket (a model id such as
// openai/gpt-5.2) is written quoted in brackets: agents.defaults.models["openai/gpt-5.2"].params,
// as FormatPath and the config's error messages write it; so may be the first ("[\"a.b\"].c").
func ParsePath(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("empty path")
	}
	if !utf8.ValidString(s) {
		return nil, errors.New("path is not valid UTF-8")
	}
	var segs []string
	for i := 0; ; {
		j := i
		for j < len(s) && s[j] != '.' && s[j] != '[' {
			j++
		}
		key := s[i:j]
		if strings.Contains(key, "]") {
			return nil, fmt.Errorf("path %q: unexpected ']'", s)
		}
		if key != "" {
			segs = append(segs, key)
		}
		i = j
		bracketed := false
		for i < len(s) && s[i] == '[' {
			if len(segs) == 0 && !quotedAt(s, i+1) {
				return nil, fmt.Errorf("path %q: empty segment", s)
			}
			seg, n, err := bracket(s[i:])
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", s, err)
			}
			segs = append(segs, seg)
			i += n
			bracketed = true
		}
		switch {
		case key == "" && !bracketed:
			return nil, fmt.Errorf("path %q: empty segment", s)
		case i == len(s):
			return segs, nil
		case s[i] != '.':
			return nil, fmt.Errorf("path %q: expected '.' or '[' after ']'", s)
		case i+1 == len(s):
			return nil, fmt.Errorf("path %q: empty segment", s)
		}
		i++
	}
}

// bracket reads one [index] or ["key"] (a JSON5 string, either quote) at the start of t and
// returns the segment and the length it took.
func bracket(t string) (string, int, error) {
	if quotedAt(t, 1) {
		p := &parser{src: []byte(t), pos: 1}
		key := p.string()
		if p.err != nil {
			return "", 0, errors.New("expected a quoted key closed by ']'")
		}
		if p.pos >= len(t) || t[p.pos] != ']' {
			return "", 0, errors.New("expected ']' after the quoted key")
		}
		return key, p.pos + 1, nil
	}
	idx, _, ok := strings.Cut(t[1:], "]")
	if !ok {
		return "", 0, errors.New("expected [index]")
	}
	if _, ok := Index(idx); !ok {
		return "", 0, fmt.Errorf("%q is not an array index", idx)
	}
	return idx, len(idx) + 2, nil
}

func quotedAt(s string, i int) bool { return i < len(s) && (s[i] == '"' || s[i] == '\'') }

// FormatPath joins segments with dots, the canonical spelling; a key that could not be read back
// so (one holding a dot or a bracket, or empty) is written quoted in brackets.
func FormatPath(segs []string) string {
	var b []byte
	for _, seg := range segs {
		b = appendSegment(b, seg)
	}
	return string(b)
}

// JoinPath appends key to a path FormatPath wrote.
func JoinPath(path, key string) string {
	return string(appendSegment([]byte(path), key))
}

func appendSegment(b []byte, key string) []byte {
	switch {
	case key == "" || strings.ContainsAny(key, ".[]"):
		b = append(b, '[')
		b = AppendQuote(b, key, '"')
		return append(b, ']')
	case len(b) > 0:
		b = append(b, '.')
	}
	return append(b, key...)
}

// Index parses an array index segment: decimal digits without leading zeros.
func Index(seg string) (int, bool) {
	if seg == "" || (len(seg) > 1 && seg[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(seg); i++ {
		if !isDigit(seg[i]) {
			return 0, false
		}
	}
	n, err := strconv.Atoi(seg)
	return n, err == nil
}

// Lookup returns the node at path under root. Objects are searched by key (the last duplicate
// wins), arrays by index. A missing step yields an error wrapping ErrNotFound.
func Lookup(root *Node, path []string) (*Node, error) {
	cur := root
	for i, seg := range path {
		switch cur.Kind {
		case Object:
			m := cur.Get(seg)
			if m == nil {
				return nil, fmt.Errorf("%s: %w", FormatPath(path[:i+1]), ErrNotFound)
			}
			cur = m.Value
		case Array:
			idx, ok := Index(seg)
			if !ok || idx >= len(cur.Elems) {
				return nil, fmt.Errorf("%s: %w", FormatPath(path[:i+1]), ErrNotFound)
			}
			cur = cur.Elems[idx]
		default:
			return nil, fmt.Errorf("%s: %w (%s is %s)", FormatPath(path[:i+1]), ErrNotFound, describePath(path[:i]), cur.Kind)
		}
	}
	return cur, nil
}

func describePath(segs []string) string {
	if len(segs) == 0 {
		return "the document"
	}
	return FormatPath(segs)
}
