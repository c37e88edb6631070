package json5

import "fmt"

// unsetReference is Unset as it was before it removed the duplicates of a key in one pass: it
// re-parsed the text and removed the last remaining duplicate until none was left, which is
// quadratic in their number. It is kept as the reference that Unset's result must equal.
func unsetReference(src []byte, path []string) ([]byte, error) {
	if len(path) == 0 {
		return nil, fmt.Errorf("unset: empty path")
	}
	out := src
	for removed := 0; ; removed++ {
		root, err := Parse(out)
		if err != nil {
			return nil, err
		}
		parent, err := Lookup(root, path[:len(path)-1])
		if err != nil {
			if removed > 0 {
				return out, nil
			}
			return nil, err
		}
		i := -1
		key := path[len(path)-1]
		switch parent.Kind {
		case Object:
			for j, m := range parent.Members {
				if m.Key == key {
					i = j
				}
			}
		case Array:
			if idx, ok := Index(key); ok && idx < len(parent.Elems) && removed == 0 {
				i = idx
			}
		}
		if i < 0 {
			if removed > 0 {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", FormatPath(path), ErrNotFound)
		}
		out = removeReference(out, parent, i)
	}
}

// removeReference deletes element i of container c from src.
func removeReference(src []byte, c *Node, i int) []byte {
	its := items(c)
	it := its[i]
	v := it.value
	end := v.End
	if v.Comma >= 0 {
		end = v.Comma + 1
	}
	var out []byte
	if tail, eol := lineTail(src, end); eol && startsLine(src, it.start) {
		// The element owns its lines, along with a comment at the end of its last line.
		for tail < len(src) && src[tail] != '\n' && src[tail] != '\r' {
			tail++
		}
		out = splice(src, lineStart(src, it.start), afterLineBreak(src, tail), nil)
		if v.Comma < 0 && i > 0 && its[i-1].value.Comma >= 0 {
			comma := its[i-1].value.Comma
			out = splice(out, comma, comma+1, nil)
		}
	} else {
		switch {
		case v.Comma >= 0:
			to := v.Comma + 1
			for to < len(src) && (src[to] == ' ' || src[to] == '\t') {
				to++
			}
			out = splice(src, it.start, to, nil)
		case i > 0:
			out = splice(src, its[i-1].value.End, v.End, nil)
		default:
			out = splice(src, it.start, v.End, nil)
		}
	}
	if len(its) == 1 {
		// An emptied container whose inside is only whitespace closes up to {} or [].
		open := c.Start
		close := open + 1
		for close < len(out) && isASCIISpace(out[close]) {
			close++
		}
		if close < len(out) && (out[close] == '}' || out[close] == ']') {
			out = splice(out, open+1, close, nil)
		}
	}
	return out
}
