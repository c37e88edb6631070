package session

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/nodmix/nodmix/internal/jsonscan"
	"github.com/nodmix/nodmix/internal/llm"
)

// decodePartsFast reads the stored form as EncodeParts writes it: an array of objects with no
// space between tokens, each key one of storedPart's names spelled exactly and given at most
// once, a string or null where storedPart holds a string or bytes, true, false or null for
// is_error, and any JSON value for args, raw and meta. For such input it gives what
// decodePartsReference gives; for anything else it reports false having decided nothing, and
// the reference reads the input. So other spellings of a key (encoding/json folds case),
// duplicates (the last one wins), unknown keys and damaged rows keep the reference's meaning
// and its error without this decoder having to repeat those rules.
//
// Nothing returned aliases data: sqlite lends a buffer that the next row overwrites.
func decodePartsFast(data []byte) ([]llm.Part, bool) {
	r := partsReader{data: data}
	if !r.eat('[') {
		return nil, false
	}
	var out []llm.Part
	if !r.eat(']') {
		for {
			var s storedPart
			if !r.object(&s) {
				return nil, false
			}
			out = append(out, s.part())
			if r.eat(']') {
				break
			}
			if !r.eat(',') {
				return nil, false
			}
		}
	}
	// Trailing bytes make the whole input invalid JSON, whatever came before.
	return out, r.pos == len(data)
}

// partsReader reads data from pos; each method reports false on input outside the stored form.
type partsReader struct {
	data []byte
	pos  int
}

// eat consumes c if it comes next.
func (r *partsReader) eat(c byte) bool {
	if r.pos < len(r.data) && r.data[r.pos] == c {
		r.pos++
		return true
	}
	return false
}

// literal consumes lit if it comes next. What follows it is checked by the caller, which
// expects a ',' or a closing bracket, so "nullx" is refused there.
func (r *partsReader) literal(lit string) bool {
	if len(r.data)-r.pos >= len(lit) && string(r.data[r.pos:r.pos+len(lit)]) == lit {
		r.pos += len(lit)
		return true
	}
	return false
}

func (r *partsReader) object(s *storedPart) bool {
	if !r.eat('{') {
		return false
	}
	if r.eat('}') {
		return true
	}
	var seen uint32
	for {
		key, ok := r.key()
		if !ok {
			return false
		}
		bit, ok := r.member(s, key)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if r.eat('}') {
			return true
		}
		if !r.eat(',') {
			return false
		}
	}
}

// key reads a key and its colon. The key's bytes are taken up to the next quote unescaped: a
// key with an escape then matches none of storedPart's names and goes to the reference.
func (r *partsReader) key() ([]byte, bool) {
	if !r.eat('"') {
		return nil, false
	}
	start := r.pos
	for r.pos < len(r.data) && r.data[r.pos] != '"' {
		r.pos++
	}
	key := r.data[start:r.pos]
	return key, r.eat('"') && r.eat(':')
}

// member reads the value of key into its field of s, and gives the bit object uses to refuse
// a second occurrence. The names are storedPart's json tags; a test holds them to the struct.
func (r *partsReader) member(s *storedPart, key []byte) (uint32, bool) {
	switch string(key) {
	case "kind":
		return 1 << 0, r.str(&s.Kind)
	case "kind_b64":
		return 1 << 1, r.b64(&s.KindB64)
	case "text":
		return 1 << 2, r.str(&s.Text)
	case "text_b64":
		return 1 << 3, r.b64(&s.TextB64)
	case "image_url":
		return 1 << 4, r.str(&s.ImageURL)
	case "image_url_b64":
		return 1 << 5, r.b64(&s.ImageURLB64)
	case "call_id":
		return 1 << 6, r.str(&s.CallID)
	case "call_id_b64":
		return 1 << 7, r.b64(&s.CallIDB64)
	case "name":
		return 1 << 8, r.str(&s.Name)
	case "name_b64":
		return 1 << 9, r.b64(&s.NameB64)
	case "args":
		return 1 << 10, r.raw(&s.Args)
	case "args_b64":
		return 1 << 11, r.b64(&s.ArgsB64)
	case "is_error":
		return 1 << 12, r.boolean(&s.IsError)
	case "dialect":
		return 1 << 13, r.str(&s.Dialect)
	case "dialect_b64":
		return 1 << 14, r.b64(&s.DialectB64)
	case "provider":
		return 1 << 15, r.str(&s.Provider)
	case "provider_b64":
		return 1 << 16, r.b64(&s.ProviderB64)
	case "raw":
		return 1 << 17, r.raw(&s.Raw)
	case "raw_b64":
		return 1 << 18, r.b64(&s.RawB64)
	case "meta":
		return 1 << 19, r.raw(&s.Meta)
	case "meta_b64":
		return 1 << 20, r.b64(&s.MetaB64)
	}
	return 0, false
}

// str reads a string field. encoding/json leaves a string as it was on null.
func (r *partsReader) str(dst *string) bool {
	if r.literal("null") {
		return true
	}
	s, ok := r.quoted()
	*dst = s
	return ok
}

// b64 reads a []byte field as encoding/json does: null sets nil, a string is unquoted and then
// decoded with base64.StdEncoding, which skips '\r' and '\n'. An empty string gives an empty,
// non-nil slice, which part tells from nil. A decoding error goes to the reference, whose
// error it is.
func (r *partsReader) b64(dst *[]byte) bool {
	if r.literal("null") {
		*dst = nil
		return true
	}
	s, ok := r.quoted()
	if !ok {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(s)
	*dst = b
	return err == nil
}

// boolean reads a bool field; encoding/json leaves it as it was on null.
func (r *partsReader) boolean(dst *bool) bool {
	switch {
	case r.literal("true"):
		*dst = true
	case r.literal("false"):
		*dst = false
	case r.literal("null"):
	default:
		return false
	}
	return true
}

// raw reads a json.RawMessage field: a copy of the value's exact bytes, null included (it is
// json.RawMessage's UnmarshalJSON, not encoding/json, that sees the null).
func (r *partsReader) raw(dst *json.RawMessage) bool {
	// The value is inside the array and its object: two levels of encoding/json's nesting limit.
	end := jsonscan.Value(r.data, r.pos, 2)
	if end < 0 {
		return false
	}
	*dst = append(json.RawMessage(nil), r.data[r.pos:end]...)
	r.pos = end
	return true
}

// quoted reads a JSON string into a string of its own, as encoding/json unquotes it. A string
// with nothing to unescape or coerce (most of a transcript) costs one copy.
func (r *partsReader) quoted() (string, bool) {
	if !r.eat('"') {
		return "", false
	}
	d := r.data
	start := r.pos
	end := stringEnd(d, start)
	if end < 0 {
		return "", false
	}
	i := start
	for i < end {
		// One comparison for the bytes that are ASCII and no control; '"' cannot come before end.
		if c := d[i]; c-' ' < utf8.RuneSelf-' ' && c != '\\' {
			i++
			continue
		}
		if d[i] < utf8.RuneSelf {
			break
		}
		rr, size := utf8.DecodeRune(d[i:end])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	if i < end {
		return r.unescape(d[start:end], i-start)
	}
	r.pos = end + 1
	return string(d[start:end]), true
}

// stringEnd gives the index of the quote that closes the string whose content begins at
// d[start], -1 if there is none. It is the first quote after an even run of backslashes; that
// is only so in valid content, but the caller checks the content up to it.
func stringEnd(d []byte, start int) int {
	for i := start; ; {
		q := bytes.IndexByte(d[i:], '"')
		if q < 0 {
			return -1
		}
		q += i
		n := 0
		for q-n > start && d[q-n-1] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// unescape reads the string content s, which quoted read plainly up to s[i], the first byte
// that needs more than copying. It follows encoding/json's unquoteBytes: invalid UTF-8 becomes
// U+FFFD byte by byte, and a control character or a bad escape (encoding/json's scanner
// refuses "\\'" before unquoteBytes would take it) ends the fast path.
func (r *partsReader) unescape(s []byte, i int) (string, bool) {
	var b strings.Builder
	// Unescaping only shrinks valid UTF-8, so one allocation holds the result.
	b.Grow(len(s))
	b.Write(s[:i])
	for i < len(s) {
		switch c := s[i]; {
		case c == '\\':
			n := unescapeOne(&b, s[i:])
			if n == 0 {
				return "", false
			}
			i += n
		case c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j]-' ' < utf8.RuneSelf-' ' && s[j] != '\\' {
				j++
			}
			b.Write(s[i:j])
			i = j
		default:
			rr, size := utf8.DecodeRune(s[i:])
			if rr == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.Write(s[i : i+size])
			}
			i += size
		}
	}
	r.pos += len(s) + 1
	return b.String(), true
}

// unescapeOne writes the escape s begins with to b and gives its length, 0 if it is invalid.
func unescapeOne(b *strings.Builder, s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch c := s[1]; c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		rr := hexRune(s)
		if rr < 0 {
			return 0
		}
		if utf16.IsSurrogate(rr) {
			// As encoding/json: a valid pair is one rune; a lone surrogate is U+FFFD and
			// whatever follows it is read on its own.
			if pair := utf16.DecodeRune(rr, hexRune(s[6:])); pair != unicode.ReplacementChar {
				b.WriteRune(pair)
				return 12
			}
			rr = unicode.ReplacementChar
		}
		b.WriteRune(rr)
		return 6
	default:
		return 0
	}
	return 2
}

// hexRune reads a \uXXXX escape at the start of s, -1 if there is none (encoding/json's getu4).
func hexRune(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
