// Package jsondepth measures how deeply JSON text nests arrays and objects, so that the stdio
// faces and the sandbox can refuse a value deeper than they allow before a decoder recurses into it.
package jsondepth

import (
	"bytes"
	"strings"
)

// Deeper reports whether data opens more than limit arrays or objects at once, counting brackets
// outside strings. A value with fewer brackets in all is not scanned.
func Deeper(data []byte, limit int) bool {
	if bytes.Count(data, []byte{'['})+bytes.Count(data, []byte{'{'}) <= limit {
		return false
	}
	return deeper(data, limit)
}

// DeeperString is Deeper of a string.
func DeeperString(text string, limit int) bool {
	if strings.Count(text, "[")+strings.Count(text, "{") <= limit {
		return false
	}
	return deeper(text, limit)
}

func deeper[T string | []byte](data T, limit int) bool {
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > limit {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}
