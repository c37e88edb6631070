package json5

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects, as encoding/json does, so that hostile input
// cannot exhaust the stack.
const MaxDepth = 10000

// SyntaxError reports where the text stops being JSON5 and what was expected there.
type SyntaxError struct {
	Offset int // byte offset
	Line   int // 1-based
	Column int // 1-based, in characters
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg)
}

// Parse parses src as one JSON5 value surrounded by optional whitespace and comments.
func Parse(src []byte) (*Node, error) {
	p := &parser{src: src}
	p.skip()
	if p.err != nil {
		return nil, p.err
	}
	n := p.value(0)
	if p.err != nil {
		return nil, p.err
	}
	p.skip()
	if p.err != nil {
		return nil, p.err
	}
	if p.pos < len(src) {
		p.fail(p.pos, "unexpected %s after the value, expected end of input", p.describe(p.pos))
		return nil, p.err
	}
	return n, nil
}

// IsBlank reports whether src holds no value at all: only whitespace and comments.
func IsBlank(src []byte) bool {
	p := &parser{src: src}
	p.skip()
	return p.err == nil && p.pos == len(src)
}

type parser struct {
	src []byte
	pos int
	err *SyntaxError
}

func (p *parser) fail(off int, format string, args ...any) {
	if p.err != nil {
		return
	}
	line, col := Position(p.src, off)
	p.err = &SyntaxError{Offset: off, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// Position converts a byte offset into a 1-based line and character column. Lines end at LF,
// CR, CRLF, U+2028 and U+2029, as in JSON5.
func Position(src []byte, off int) (line, col int) {
	line, col = 1, 1
	off = min(off, len(src))
	for i := 0; i < off; {
		r, size := utf8.DecodeRune(src[i:])
		switch {
		case r == '\r' && i+1 < len(src) && src[i+1] == '\n' && i+1 < off:
			i++ // the LF ends the line
			continue
		case r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029:
			line++
			col = 1
		default:
			col++
		}
		i += size
	}
	return line, col
}

// describe names the character at off for a message. It shows one character only, never a run
// of text, so a message cannot carry a secret that the user mistyped.
func (p *parser) describe(off int) string {
	if off >= len(p.src) {
		return "end of input"
	}
	r, size := utf8.DecodeRune(p.src[off:])
	switch {
	case r == utf8.RuneError && size == 1:
		return fmt.Sprintf("invalid UTF-8 byte 0x%02x", p.src[off])
	case r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029:
		return "line break"
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf("control character U+%04X", r)
	case unicode.IsPrint(r):
		return strconv.QuoteRune(r)
	}
	return fmt.Sprintf("character U+%04X", r)
}

func isLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029
}

func isSpace(r rune) bool {
	switch r {
	case '\t', '\v', '\f', ' ', 0xa0, 0xfeff:
		return true
	}
	return r > 0x7f && unicode.Is(unicode.Zs, r)
}

// skip moves past whitespace and comments.
func (p *parser) skip() {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			p.pos += 2
			for p.pos < len(p.src) {
				r, size := utf8.DecodeRune(p.src[p.pos:])
				if isLineTerminator(r) {
					break
				}
				p.pos += size
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			end := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if end < 0 {
				p.fail(p.pos, "unterminated block comment, expected */")
				return
			}
			p.pos += 2 + end + 2
		case c < utf8.RuneSelf:
			return
		default:
			r, size := utf8.DecodeRune(p.src[p.pos:])
			if !isSpace(r) && !isLineTerminator(r) {
				return
			}
			p.pos += size
		}
	}
}

func (p *parser) value(depth int) *Node {
	if p.pos >= len(p.src) {
		p.fail(p.pos, "unexpected end of input, expected a value")
		return nil
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"' || c == '\'':
		start := p.pos
		s := p.string()
		return &Node{Kind: String, Start: start, End: p.pos, Comma: -1, Str: s}
	case c == '-' || c == '+' || c == '.' || isDigit(c) || c == 'I' || c == 'N':
		return p.number()
	case c == 't':
		return p.literal("true", &Node{Kind: Bool, Bool: true})
	case c == 'f':
		return p.literal("false", &Node{Kind: Bool})
	case c == 'n':
		return p.literal("null", &Node{Kind: Null})
	}
	p.fail(p.pos, "unexpected %s, expected a value", p.describe(p.pos))
	return nil
}

func (p *parser) literal(word string, n *Node) *Node {
	if !strings.HasPrefix(string(p.src[p.pos:min(len(p.src), p.pos+len(word))]), word) ||
		p.identPartAt(p.pos+len(word)) {
		p.fail(p.pos, "invalid literal, expected a value (true, false, null, a number, a string, an array or an object)")
		return nil
	}
	n.Start, n.End, n.Comma = p.pos, p.pos+len(word), -1
	p.pos += len(word)
	return n
}

// identPartAt reports whether an identifier character follows at off, which would make a
// literal such as "true" part of a longer word.
func (p *parser) identPartAt(off int) bool {
	if off >= len(p.src) {
		return false
	}
	r, _ := utf8.DecodeRune(p.src[off:])
	return r == '\\' || isIdentPart(r)
}

func (p *parser) object(depth int) *Node {
	if depth >= MaxDepth {
		p.fail(p.pos, "nesting deeper than %d levels", MaxDepth)
		return nil
	}
	n := &Node{Kind: Object, Start: p.pos, Comma: -1}
	p.pos++ // {
	for {
		p.skip()
		if p.err != nil {
			return nil
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			n.End = p.pos
			return n
		}
		m := &Member{KeyStart: p.pos}
		switch {
		case p.pos >= len(p.src):
			p.fail(p.pos, "unexpected end of input, expected a key or '}'")
			return nil
		case p.src[p.pos] == '"' || p.src[p.pos] == '\'':
			m.KeyQuote = p.src[p.pos]
			m.Key = p.string()
		default:
			m.Key = p.identifier()
		}
		if p.err != nil {
			return nil
		}
		m.KeyEnd = p.pos
		p.skip()
		if p.err != nil {
			return nil
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			p.fail(p.pos, "unexpected %s, expected ':' after object key", p.describe(p.pos))
			return nil
		}
		p.pos++
		p.skip()
		if p.err != nil {
			return nil
		}
		m.Value = p.value(depth + 1)
		if p.err != nil {
			return nil
		}
		n.Members = append(n.Members, m)
		p.skip()
		if p.err != nil {
			return nil
		}
		switch {
		case p.pos < len(p.src) && p.src[p.pos] == ',':
			m.Value.Comma = p.pos
			p.pos++
		case p.pos < len(p.src) && p.src[p.pos] == '}':
		default:
			p.fail(p.pos, "unexpected %s, expected ',' or '}' after object member", p.describe(p.pos))
			return nil
		}
	}
}

func (p *parser) array(depth int) *Node {
	if depth >= MaxDepth {
		p.fail(p.pos, "nesting deeper than %d levels", MaxDepth)
		return nil
	}
	n := &Node{Kind: Array, Start: p.pos, Comma: -1}
	p.pos++ // [
	for {
		p.skip()
		if p.err != nil {
			return nil
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			n.End = p.pos
			return n
		}
		if p.pos >= len(p.src) {
			p.fail(p.pos, "unexpected end of input, expected a value or ']'")
			return nil
		}
		e := p.value(depth + 1)
		if p.err != nil {
			return nil
		}
		n.Elems = append(n.Elems, e)
		p.skip()
		if p.err != nil {
			return nil
		}
		switch {
		case p.pos < len(p.src) && p.src[p.pos] == ',':
			e.Comma = p.pos
			p.pos++
		case p.pos < len(p.src) && p.src[p.pos] == ']':
		default:
			p.fail(p.pos, "unexpected %s, expected ',' or ']' after array element", p.describe(p.pos))
			return nil
		}
	}
}

func (p *parser) number() *Node {
	start := p.pos
	n := &Node{Kind: Number, Start: start, Comma: -1}
	neg := false
	if c := p.src[p.pos]; c == '+' || c == '-' {
		neg = c == '-'
		p.pos++
	}
	rest := p.src[p.pos:]
	switch {
	case len(rest) >= len("Infinity") && string(rest[:len("Infinity")]) == "Infinity":
		p.pos += len("Infinity")
		n.Num = inf(neg)
	case len(rest) >= len("NaN") && string(rest[:len("NaN")]) == "NaN":
		p.pos += len("NaN")
		n.Num = math.NaN()
	case len(rest) >= 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X'):
		p.pos += 2
		digits := p.pos
		for p.pos < len(p.src) && isHex(p.src[p.pos]) {
			p.pos++
		}
		if p.pos == digits {
			p.fail(p.pos, "unexpected %s, expected a hexadecimal digit", p.describe(p.pos))
			return nil
		}
		// ParseFloat rounds a hex mantissa correctly when given a binary exponent.
		f, _ := strconv.ParseFloat("0x"+string(p.src[digits:p.pos])+"p0", 64)
		if neg {
			f = -f
		}
		n.Num = f
	case len(rest) > 0 && !isDigit(rest[0]) && rest[0] != '.':
		p.fail(start, "invalid literal, expected a value (true, false, null, a number, a string, an array or an object)")
		return nil
	default:
		if !p.decimal() {
			return nil
		}
		text := string(p.src[start:p.pos])
		text = strings.TrimPrefix(text, "+")
		// A value beyond float64's range is ±Inf, which JSON5 can spell anyway.
		f, _ := strconv.ParseFloat(text, 64)
		n.Num = f
	}
	if p.identPartAt(p.pos) {
		p.fail(p.pos, "unexpected %s after number", p.describe(p.pos))
		return nil
	}
	n.End = p.pos
	return n
}

// decimal scans the unsigned part of a decimal literal: 0 | [1-9][0-9]*, an optional fraction
// (digits may be missing on either side of the point, not both) and an optional exponent.
func (p *parser) decimal() bool {
	intDigits := 0
	if p.pos < len(p.src) && p.src[p.pos] == '0' {
		p.pos++
		intDigits = 1
		if p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.fail(p.pos, "leading zeros are not allowed in numbers")
			return false
		}
	} else {
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
			intDigits++
		}
	}
	fracDigits := 0
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
			fracDigits++
		}
	}
	if intDigits == 0 && fracDigits == 0 {
		p.fail(p.pos, "unexpected %s, expected a digit", p.describe(p.pos))
		return false
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(p.src) || !isDigit(p.src[p.pos]) {
			p.fail(p.pos, "unexpected %s, expected a digit in the exponent", p.describe(p.pos))
			return false
		}
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
		}
	}
	return true
}

func inf(neg bool) float64 {
	if neg {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) rune {
	switch {
	case isDigit(c):
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	}
	return rune(c-'A') + 10
}

// hexAt decodes n hex digits at off, or returns -1.
func (p *parser) hexAt(off, n int) rune {
	if off+n > len(p.src) {
		return -1
	}
	var r rune
	for i := range n {
		c := p.src[off+i]
		if !isHex(c) {
			return -1
		}
		r = r<<4 | hexVal(c)
	}
	return r
}

// string scans a quoted string at p.pos. Decoding follows encoding/json where the two languages
// overlap: invalid UTF-8 and unpaired surrogate escapes become U+FFFD.
func (p *parser) string() string {
	quote := p.src[p.pos]
	start := p.pos
	p.pos++
	// Most strings have no escapes and are valid UTF-8: take them as they stand.
	for i := p.pos; i < len(p.src); i++ {
		c := p.src[i]
		if c == quote {
			if raw := p.src[p.pos:i]; utf8.Valid(raw) {
				p.pos = i + 1
				return string(raw)
			}
			break
		}
		if c == '\\' || c == '\n' || c == '\r' {
			break
		}
	}
	var b strings.Builder
	for {
		if p.pos >= len(p.src) {
			p.fail(start, "unterminated string, expected a closing %c", quote)
			return ""
		}
		c := p.src[p.pos]
		switch {
		case c == quote:
			p.pos++
			return b.String()
		case c == '\n' || c == '\r':
			p.fail(p.pos, "line break inside a string (escape it as \\n, or end the line with \\)")
			return ""
		case c == '\\':
			if !p.escape(&b) {
				return ""
			}
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.src[p.pos:])
			if r == utf8.RuneError && size == 1 {
				r = unicode.ReplacementChar
			}
			b.WriteRune(r)
			p.pos += size
		}
	}
}

// escape decodes one escape sequence starting at the backslash at p.pos.
func (p *parser) escape(b *strings.Builder) bool {
	at := p.pos
	p.pos++
	if p.pos >= len(p.src) {
		p.fail(p.pos, "unterminated escape sequence")
		return false
	}
	c := p.src[p.pos]
	switch c {
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
	case 'v':
		b.WriteByte('\v')
	case '\n':
	case '\r':
		if p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n' {
			p.pos++
		}
	case '0':
		if p.pos+1 < len(p.src) && isDigit(p.src[p.pos+1]) {
			p.fail(at, "invalid escape sequence: \\0 may not be followed by a digit")
			return false
		}
		b.WriteByte(0)
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		p.fail(at, "invalid escape sequence: a backslash may not be followed by a digit other than 0")
		return false
	case 'x':
		r := p.hexAt(p.pos+1, 2)
		if r < 0 {
			p.fail(at, "invalid escape sequence: \\x needs two hexadecimal digits")
			return false
		}
		b.WriteRune(r)
		p.pos += 2
	case 'u':
		r := p.hexAt(p.pos+1, 4)
		if r < 0 {
			p.fail(at, "invalid escape sequence: \\u needs four hexadecimal digits")
			return false
		}
		p.pos += 4
		if utf16.IsSurrogate(r) {
			// Pair with a following \uXXXX if it completes the surrogate; otherwise the lone
			// half becomes U+FFFD and the next escape is decoded on its own.
			if p.pos+2 < len(p.src) && p.src[p.pos+1] == '\\' && p.src[p.pos+2] == 'u' {
				if r2 := p.hexAt(p.pos+3, 4); r2 >= 0 {
					if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
						b.WriteRune(dec)
						p.pos += 7
						return true
					}
				}
			}
			r = unicode.ReplacementChar
		}
		b.WriteRune(r)
	default:
		r, size := utf8.DecodeRune(p.src[p.pos:])
		switch {
		case r == utf8.RuneError && size == 1:
			r = unicode.ReplacementChar
		case r == 0x2028 || r == 0x2029:
			// Line continuation.
			p.pos += size
			return true
		}
		b.WriteRune(r)
		p.pos += size
		return true
	}
	p.pos++
	return true
}

// identifier scans an ECMAScript 5.1 IdentifierName used as an unquoted key.
func (p *parser) identifier() string {
	start := p.pos
	// Fast path: a plain ASCII identifier.
	for i := p.pos; i < len(p.src); i++ {
		c := p.src[i]
		if c >= utf8.RuneSelf || c == '\\' {
			break
		}
		if !isIdentStart(rune(c)) && (i == start || !isDigit(c)) {
			if i > start {
				p.pos = i
				return string(p.src[start:i])
			}
			break
		}
		if i == len(p.src)-1 {
			p.pos = len(p.src)
			return string(p.src[start:])
		}
	}
	var b strings.Builder
	for p.pos < len(p.src) {
		r, size := utf8.DecodeRune(p.src[p.pos:])
		at := p.pos
		if r == '\\' {
			if p.pos+1 >= len(p.src) || p.src[p.pos+1] != 'u' {
				p.fail(at, "invalid escape in key, expected \\u followed by four hexadecimal digits")
				return ""
			}
			r = p.hexAt(p.pos+2, 4)
			if r < 0 {
				p.fail(at, "invalid escape in key, expected \\u followed by four hexadecimal digits")
				return ""
			}
			size = 6
			if !isIdentStart(r) && (at == start || !isIdentPart(r)) {
				p.fail(at, "escape in key does not name an identifier character")
				return ""
			}
		} else if (at == start && !isIdentStart(r)) || (at > start && !isIdentPart(r)) {
			break
		}
		b.WriteRune(r)
		p.pos += size
	}
	if p.pos == start {
		p.fail(start, "unexpected %s, expected a key (a string or an identifier) or '}'", p.describe(start))
		return ""
	}
	return b.String()
}

func isIdentStart(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '$' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
	}
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lm, unicode.Lo, unicode.Nl)
}

func isIdentPart(r rune) bool {
	if r < utf8.RuneSelf {
		return isIdentStart(r) || (r >= '0' && r <= '9')
	}
	return isIdentStart(r) || r == 0x200c || r == 0x200d ||
		unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc)
}

// IsIdentifier reports whether s can be written as an unquoted JSON5 key.
func IsIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == utf8.RuneError || (i == 0 && !isIdentStart(r)) || !isIdentPart(r) {
			return false
		}
	}
	return true
}
