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
// spellings give the same segments. Keys that contain dots or brackets cannot be addressed.
func ParsePath(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("empty path")
	}
	if !utf8.ValidString(s) {
		return nil, errors.New("path is not valid UTF-8")
	}
	var segs []string
	for part := range strings.SplitSeq(s, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" && (len(segs) == 0 || rest == "") {
			return nil, fmt.Errorf("path %q: empty segment", s)
		}
		if key != "" {
			if strings.Contains(key, "]") {
				return nil, fmt.Errorf("path %q: unexpected ']'", s)
			}
			segs = append(segs, key)
		}
		if !strings.Contains(part, "[") {
			continue
		}
		rest = "[" + rest
		for rest != "" {
			idx, tail, ok := strings.Cut(rest[1:], "]")
			if rest[0] != '[' || !ok {
				return nil, fmt.Errorf("path %q: expected [index]", s)
			}
			if _, ok := Index(idx); !ok {
				return nil, fmt.Errorf("path %q: %q is not an array index", s, idx)
			}
			segs = append(segs, idx)
			rest = tail
		}
	}
	return segs, nil
}

// FormatPath joins segments with dots, the canonical spelling.
func FormatPath(segs []string) string { return strings.Join(segs, ".") }

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
