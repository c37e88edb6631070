package catalog

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/jsonscan"
)

// decodeLine is the fast path of ReadFile: it fills ft from a line made of the fields a catalog
// line has, each spelled exactly, with string values (or null) and any valid input_schema, which
// stays raw (a slice of b: the caller copies it). It reports false for anything else, which the
// standard decoder then reads and reports on, so that both paths accept the same lines with the
// same result. The line is checked as it is read (package jsonscan): one pass over its bytes, where
// json.Valid and then a search for each value's end took two. A catalog of 10,000 lines is read
// in a fraction of what reflection costs.
func decodeLine(b []byte, ft *fileTool) bool {
	var a arena
	return a.decodeLine(b, ft)
}

// decodeLine is decodeLine with the line's strings copied into the arena.
func (a *arena) decodeLine(b []byte, ft *fileTool) bool {
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	i := jsonscan.Space(b, 1)
	if i < len(b) && b[i] == '}' {
		return i+1 == len(b)
	}
	var seen uint16 // a bit for each field of fileFields: a line that repeats one is the decoder's
	for i < len(b) && b[i] == '"' {
		kEnd, _ := jsonscan.String(b, i)
		if kEnd < 0 {
			return false
		}
		key := b[i+1 : kEnd-1]
		i = jsonscan.Space(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = jsonscan.Space(b, i+1)
		if string(key) == "input_schema" {
			if seen&(1<<8) != 0 {
				return false
			}
			seen |= 1 << 8
			vEnd := jsonscan.Value(b, i, 1)
			if vEnd < 0 {
				return false
			}
			ft.InputSchema = b[i:vEnd]
			i = vEnd
		} else {
			dst, bit := ft.stringField(key)
			if dst == nil || i >= len(b) || seen&bit != 0 {
				return false // an unknown, differently spelled or repeated key: the decoder decides
			}
			seen |= bit
			switch b[i] {
			case 'n': // null leaves a string field as it is
				if i = jsonscan.Literal(b, i, "null"); i < 0 {
					return false
				}
			case '"':
				vEnd, flags := jsonscan.String(b, i)
				if vEnd < 0 {
					return false
				}
				*dst = a.unquote(b[i:vEnd], flags)
				i = vEnd
			default:
				return false
			}
		}
		i = jsonscan.Space(b, i)
		if i < len(b) && b[i] == ',' {
			i = jsonscan.Space(b, i+1)
			continue
		}
		return i+1 == len(b) && b[i] == '}'
	}
	return false
}

// stringField is the string field of a key spelled exactly, and its bit in the set decodeLine
// keeps of the fields it has read (the index of the key in fileFields).
func (ft *fileTool) stringField(key []byte) (*string, uint16) {
	switch string(key) {
	case "id":
		return &ft.ID, 1 << 0
	case "name":
		return &ft.Name, 1 << 1
	case "label":
		return &ft.Label, 1 << 2
	case "description":
		return &ft.Description, 1 << 3
	case "summary":
		return &ft.Summary, 1 << 4
	case "source":
		return &ft.Source, 1 << 5
	case "server":
		return &ft.Server, 1 << 6
	case "mcp_tool_name":
		return &ft.MCPToolName, 1 << 7
	}
	return nil, 0
}

// unquote decodes a valid JSON string as encoding/json does; flags are jsonscan.String's.
func unquote(v []byte, flags uint8) string {
	return unquoteWith(v, flags, func(b []byte) string { return string(b) })
}

// unquoteWith is unquote, with str making the string of a body that needs no decoding.
func unquoteWith(v []byte, flags uint8, str func([]byte) string) string {
	body := v[1 : len(v)-1]
	if flags&jsonscan.Escaped == 0 && (flags&jsonscan.NonASCII == 0 || utf8.Valid(body)) {
		return str(body)
	}
	var s string
	_ = json.Unmarshal(v, &s) // the value is valid JSON
	return s
}

// rawSchemaKeys is SchemaKeys without decoding the schema into maps: the discovery index asks for
// the keys of every tool of every catalog version. It checks the schema as it reads it, in one
// pass. ok is false for a schema with a key that differs from "properties" only in case or by
// non-ASCII letters, which the decoder's case-insensitive field matching decides.
func rawSchemaKeys(b []byte) (keys []string, ok bool) {
	i := jsonscan.Space(b, 0)
	if i == len(b) || b[i] != '{' {
		return nil, true // invalid, null or not an object: no keys
	}
	var small [16]memberName
	props := small[:0]
	valid, ambiguous := true, false
	i = jsonscan.Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return nil, true
			}
			kEnd, kFlags := jsonscan.String(b, i)
			if kEnd < 0 {
				return nil, true
			}
			isProps := false
			if key := b[i+1 : kEnd-1]; kFlags == 0 {
				isProps = string(key) == "properties"
				ambiguous = ambiguous || !isProps && bytes.EqualFold(key, []byte("properties"))
			} else {
				k := unquote(b[i:kEnd], kFlags)
				isProps = k == "properties"
				ambiguous = ambiguous || !isProps && (strings.EqualFold(k, "properties") || !isASCII(k))
			}
			i = jsonscan.Space(b, kEnd)
			if i >= len(b) || b[i] != ':' {
				return nil, true
			}
			i = jsonscan.Space(b, i+1)
			switch {
			case !isProps || i >= len(b):
				i = jsonscan.Value(b, i, 1)
			case b[i] == 'n':
				props = props[:0]
				i = jsonscan.Value(b, i, 1)
			case b[i] == '{':
				// Members of several "properties" objects add up, as the decoder's map does.
				props, i = appendMemberNames(props, b, i)
			default:
				valid = false // the decoder fails the whole schema
				i = jsonscan.Value(b, i, 1)
			}
			if i < 0 {
				return nil, true
			}
			i = jsonscan.Space(b, i)
			if i < len(b) && b[i] == ',' {
				i = jsonscan.Space(b, i+1)
				continue
			}
			if i >= len(b) || b[i] != '}' {
				return nil, true
			}
			i++
			break
		}
	}
	if jsonscan.Space(b, i) != len(b) {
		return nil, true // text after the object: not valid JSON
	}
	if ambiguous {
		return nil, false
	}
	if !valid || len(props) == 0 {
		return nil, true
	}
	// One string holds every name that needs no decoding, the usual case: an allocation for the
	// names, not one each.
	n := 0
	for _, p := range props {
		n += len(p.quoted) - 2
	}
	var sb strings.Builder
	sb.Grow(n)
	keys = make([]string, len(props))
	for k, p := range props {
		body := p.quoted[1 : len(p.quoted)-1]
		if p.flags&jsonscan.Escaped == 0 && (p.flags&jsonscan.NonASCII == 0 || utf8.Valid(body)) {
			start := sb.Len()
			sb.Write(body)
			keys[k] = sb.String()[start:]
		} else {
			keys[k] = unquote(p.quoted, p.flags)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys), true
}

// memberName is a member name as it is in the text, quoted, with jsonscan.String's flags.
type memberName struct {
	quoted []byte
	flags  uint8
}

// appendMemberNames appends the member names of the object at b[i], a schema's "properties" (at
// depth 2), checking it; it returns the index after the object, or -1.
func appendMemberNames(names []memberName, b []byte, i int) ([]memberName, int) {
	i = jsonscan.Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return names, i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return names, -1
		}
		kEnd, kFlags := jsonscan.String(b, i)
		if kEnd < 0 {
			return names, -1
		}
		names = append(names, memberName{b[i:kEnd], kFlags})
		i = jsonscan.Space(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return names, -1
		}
		if i = jsonscan.Value(b, jsonscan.Space(b, i+1), 2); i < 0 {
			return names, -1
		}
		i = jsonscan.Space(b, i)
		if i >= len(b) {
			return names, -1
		}
		switch b[i] {
		case ',':
			i = jsonscan.Space(b, i+1)
		case '}':
			return names, i + 1
		default:
			return names, -1
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
