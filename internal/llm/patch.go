package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// member is one key of a JSON object, in document order: the key decoded, for matching, and
// as written, so that output keeps the bytes it was given.
type member struct {
	key    string
	rawKey []byte
	val    []byte
}

// splitObject returns the members of a JSON object in order (values are slices of raw), or
// ok=false when raw is not an object. It checks that raw is one valid JSON value.
func splitObject(raw []byte) (ms []member, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false, nil
	}
	var s scanner
	if raw[0] != '{' {
		end, err := s.value(raw, 0, 0)
		if err == nil && end != len(raw) {
			err = syntaxError(raw, end, "after top-level value")
		}
		return nil, false, err
	}
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == '}' {
		i++
	} else {
		for {
			if i >= len(raw) || raw[i] != '"' {
				return nil, false, syntaxError(raw, i, "looking for beginning of object key string")
			}
			kend, err := s.str(raw, i)
			if err != nil {
				return nil, false, err
			}
			rawKey := raw[i:kend]
			if i = skipSpace(raw, kend); i >= len(raw) || raw[i] != ':' {
				return nil, false, syntaxError(raw, i, "after object key")
			}
			i = skipSpace(raw, i+1)
			vend, err := s.value(raw, i, 1)
			if err != nil {
				return nil, false, err
			}
			ms = append(ms, member{key: decodeKey(rawKey), rawKey: rawKey, val: bytes.TrimRight(raw[i:vend], " \t\r\n")})
			if i = vend; i >= len(raw) {
				return nil, false, syntaxError(raw, i, "")
			}
			if raw[i] == '}' {
				i++
				break
			}
			if raw[i] != ',' {
				return nil, false, syntaxError(raw, i, "after object key:value pair")
			}
			i = skipSpace(raw, i+1)
		}
	}
	if i != len(raw) {
		return nil, false, syntaxError(raw, i, "after top-level value")
	}
	return ms, true, nil
}

func decodeKey(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid: checked by the scanner
	return s
}

func joinObject(ms []member) []byte {
	n := 2
	for _, m := range ms {
		n += len(m.rawKey) + len(m.val) + 2
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.rawKey...)
		b = append(b, ':')
		b = append(b, m.val...)
	}
	return append(b, '}')
}

// MergePatch applies an RFC 7396 JSON merge patch to the JSON object doc and returns the result
// in compact form. Keys keep their place in doc; keys the patch adds come after them in the
// patch's order, so the output is deterministic (golden payloads depend on it). A null member of
// the patch deletes the key. An empty patch returns doc unchanged. Values the patch does not
// touch are copied as they are, so doc should be compact already (an encoder's output is).
func MergePatch(doc, patch []byte) ([]byte, error) {
	if len(bytes.TrimSpace(patch)) == 0 {
		return doc, nil
	}
	out, err := merge(doc, patch)
	if err != nil {
		return nil, fmt.Errorf("merge patch: %w", err)
	}
	return out, nil
}

func merge(doc, patch []byte) ([]byte, error) {
	pm, isObj, err := splitObject(patch)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	if !isObj {
		var c bytes.Buffer
		if err := json.Compact(&c, patch); err != nil {
			return nil, err
		}
		return c.Bytes(), nil
	}
	dm, docObj, err := splitObject(doc)
	if err != nil {
		return nil, fmt.Errorf("document: %w", err)
	}
	if !docObj {
		dm = nil
	}
	for _, p := range pm {
		// A key doc repeats is one key whose value is the last (as decoders read it): the
		// patch leaves it once, in the first one's place.
		at, last := -1, -1
		for i := range dm {
			if dm[i].key == p.key {
				if at < 0 {
					at = i
				}
				last = i
			}
		}
		if at >= 0 && last > at {
			dm[at].val = dm[last].val
			tail := slices.DeleteFunc(dm[at+1:], func(m member) bool { return m.key == p.key })
			dm = dm[:at+1+len(tail)]
		}
		if string(p.val) == "null" {
			if at >= 0 {
				dm = slices.Delete(dm, at, at+1)
			}
			continue
		}
		var base []byte
		if at >= 0 {
			base = dm[at].val
		}
		v, err := merge(base, p.val)
		if err != nil {
			return nil, err
		}
		if at >= 0 {
			dm[at].val = v
		} else {
			dm = append(dm, member{p.key, p.rawKey, v})
		}
	}
	return joinObject(dm), nil
}

// AddMissing copies the members of extra whose keys doc lacks to the end of the JSON object doc,
// in key order of the map's sorted keys: pass-through fields never override what nodmix set.
func AddMissing(doc []byte, extra map[string]json.RawMessage) ([]byte, error) {
	if len(extra) == 0 {
		return doc, nil
	}
	dm, ok, err := splitObject(doc)
	if err != nil || !ok {
		return nil, fmt.Errorf("pass-through fields: body is not a JSON object")
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !slices.ContainsFunc(dm, func(m member) bool { return m.key == k }) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		var c bytes.Buffer
		if err := json.Compact(&c, extra[k]); err != nil {
			return nil, fmt.Errorf("pass-through field %q: %w", k, err)
		}
		rk, _ := json.Marshal(k)
		dm = append(dm, member{k, rk, c.Bytes()})
	}
	return joinObject(dm), nil
}

// ErrorMessage extracts a human message from a provider's error body, whatever its dialect:
// {"error":{"message"}} (OpenAI, Gemini, Anthropic inside "error"), {"error":"…"} (Ollama),
// {"message":"…"}, {"detail":"…"}, MiniMax's {"base_resp":{"status_msg":"…"}}. It returns ""
// when it finds none; callers then show the status.
func ErrorMessage(body []byte) string {
	var v struct {
		Error    json.RawMessage `json:"error"`
		Message  string          `json:"message"`
		Detail   json.RawMessage `json:"detail"`
		BaseResp json.RawMessage `json:"base_resp"` // raw: an odd one must not hide the rest
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if len(v.Error) > 0 {
		var s string
		if json.Unmarshal(v.Error, &s) == nil && s != "" {
			return s
		}
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v.Error, &o) == nil && o.Message != "" {
			return o.Message
		}
	}
	if v.Message != "" {
		return v.Message
	}
	var s string
	if json.Unmarshal(v.Detail, &s) == nil && s != "" {
		return s
	}
	var br struct {
		StatusMsg string `json:"status_msg"`
	}
	_ = json.Unmarshal(v.BaseResp, &br) // absent or odd: no message
	return br.StatusMsg
}

// ErrorDocument is a whole response body's error member as a StreamError, for a body a dialect
// could not read as an answer ({"error": "…"}, an error object of another shape): the
// provider's message where ErrorMessage finds one, else the member itself, cut to 300 bytes.
// It is nil for a body without an error member.
func ErrorDocument(body []byte) *StreamError {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Error) == 0 || string(v.Error) == "null" {
		return nil
	}
	msg := ErrorMessage(body)
	if msg == "" {
		var c bytes.Buffer
		_ = json.Compact(&c, v.Error) // it was just parsed
		msg = c.String()
		if len(msg) > 300 {
			msg = strings.ToValidUTF8(msg[:300], "") + "…"
		}
	}
	return &StreamError{Message: msg}
}

// scanner checks JSON as it skips over it: merge patches run over whole request bodies on
// every model call, and a checking skip is several times faster than decoding.
type scanner struct{}

// maxDepth bounds nesting as encoding/json does, so hostile input cannot grow the stack without end.
const maxDepth = 10000

var errDepth = errors.New("exceeded max depth")

func syntaxError(b []byte, i int, what string) error {
	if i >= len(b) {
		return fmt.Errorf("unexpected end of JSON input")
	}
	return fmt.Errorf("invalid character %q %s (offset %d)", b[i], what, i)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// value checks the value starting at b[i] (no leading space) and returns the index after it
// and any space that follows it.
func (s scanner) value(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, syntaxError(b, i, "")
	}
	var err error
	switch c := b[i]; {
	case c == '{':
		if depth++; depth > maxDepth {
			return i, errDepth
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return skipSpace(b, i+1), nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, syntaxError(b, i, "looking for beginning of object key string")
			}
			if i, err = s.str(b, i); err != nil {
				return i, err
			}
			if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
				return i, syntaxError(b, i, "after object key")
			}
			if i, err = s.value(b, skipSpace(b, i+1), depth); err != nil {
				return i, err
			}
			if i >= len(b) {
				return i, syntaxError(b, i, "")
			}
			if b[i] == '}' {
				return skipSpace(b, i+1), nil
			}
			if b[i] != ',' {
				return i, syntaxError(b, i, "after object key:value pair")
			}
			i = skipSpace(b, i+1)
		}
	case c == '[':
		if depth++; depth > maxDepth {
			return i, errDepth
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return skipSpace(b, i+1), nil
		}
		for {
			if i, err = s.value(b, i, depth); err != nil {
				return i, err
			}
			if i >= len(b) {
				return i, syntaxError(b, i, "")
			}
			if b[i] == ']' {
				return skipSpace(b, i+1), nil
			}
			if b[i] != ',' {
				return i, syntaxError(b, i, "after array element")
			}
			i = skipSpace(b, i+1)
		}
	case c == '"':
		i, err = s.str(b, i)
	case c == '-' || c >= '0' && c <= '9':
		i, err = s.number(b, i)
	case c == 't':
		i, err = s.literal(b, i, "true")
	case c == 'f':
		i, err = s.literal(b, i, "false")
	case c == 'n':
		i, err = s.literal(b, i, "null")
	default:
		return i, syntaxError(b, i, "looking for beginning of value")
	}
	if err != nil {
		return i, err
	}
	return skipSpace(b, i), nil
}

// str checks the string starting at b[i] == '"' and returns the index after its closing quote.
func (scanner) str(b []byte, i int) (int, error) {
	i++
	for i < len(b) {
		c := b[i]
		if plain[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return i, syntaxError(b, i+1, "")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, syntaxError(b, len(b), "")
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return i, fmt.Errorf("invalid character %q in \\u hexadecimal character escape", h)
					}
				}
				i += 6
			default:
				return i, syntaxError(b, i+1, "in string escape code")
			}
		default:
			return i, syntaxError(b, i, "in string literal")
		}
	}
	return i, syntaxError(b, i, "")
}

// plain marks the bytes a string holds as they are: not a quote, a backslash or a control.
var plain = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number checks the number starting at b[i] against the JSON grammar.
func (scanner) number(b []byte, i int) (int, error) {
	digits := func(i int) (int, bool) {
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j, j > i
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i, _ = digits(i)
	default:
		return i, syntaxError(b, i, "in numeric literal")
	}
	ok := true
	if i < len(b) && b[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return i, syntaxError(b, i, "after decimal point in numeric literal")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return i, syntaxError(b, i, "in exponent of numeric literal")
		}
	}
	return i, nil
}

func (scanner) literal(b []byte, i int, lit string) (int, error) {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return i, syntaxError(b, i, "in literal "+lit)
	}
	return i + len(lit), nil
}
