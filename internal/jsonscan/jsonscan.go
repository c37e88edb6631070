// Package jsonscan checks JSON as it finds the end of a value, in one pass: for readers that
// take a value's bytes or fields without decoding it, where json.Valid first would walk it twice.
package jsonscan

import "math/bits"

// These functions accept exactly what json.Valid accepts (FuzzScanValue compares them),
// including its limit on nesting. encoding/json's Valid costs as much as the rest of reading a
// catalog line, and reading a line's fields or a schema's keys after it walks the same bytes
// again.

// maxDepth is encoding/json's limit on nested arrays and objects: a deeper value is invalid.
const maxDepth = 10000

// Flags of a scanned string (String), so that reading it can skip work it does not need.
const (
	Escaped  = 1 << iota // has a backslash escape
	NonASCII             // has a byte outside ASCII (possibly not valid UTF-8)
)

// Valid is json.Valid in one pass.
func Valid(b []byte) bool {
	i := Space(b, 0)
	end := Value(b, i, 0)
	return end >= 0 && Space(b, end) == len(b)
}

// Value returns the index after the valid JSON value starting at b[i], or -1. depth is the
// number of arrays and objects the value is inside.
func Value(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; c {
	case '"':
		end, _ := String(b, i)
		return end
	case '{':
		return scanObject(b, i, depth+1)
	case '[':
		return scanArray(b, i, depth+1)
	case 't':
		return Literal(b, i, "true")
	case 'f':
		return Literal(b, i, "false")
	case 'n':
		return Literal(b, i, "null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			return scanNumber(b, i)
		}
		return -1
	}
}

// Literal returns the index after lit (true, false or null) at b[i], or -1.
func Literal(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// String returns the index after the valid JSON string starting at b[i] (a quote), or -1,
// and what reading it needs.
func String(b []byte, i int) (end int, flags uint8) {
	j := i + 1
	for {
		// Most bytes of a catalog are plain text: they are passed over eight at a time, and
		// past the first eight of a string, which most strings end within, sixteen.
		if j+8 <= len(b) {
			if m := notPlain(load64(b, j)); m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				goto special
			}
			j += 8
			for j+16 <= len(b) {
				m0, m1 := notPlain(load64(b, j)), notPlain(load64(b, j+8))
				if m0|m1 != 0 {
					if m0 != 0 {
						j += bits.TrailingZeros64(m0) >> 3
					} else {
						j += 8 + bits.TrailingZeros64(m1)>>3
					}
					goto special
				}
				j += 16
			}
			for j+8 <= len(b) {
				if m := notPlain(load64(b, j)); m != 0 {
					j += bits.TrailingZeros64(m) >> 3
					break
				}
				j += 8
			}
		}
	special:
		if j >= len(b) {
			return -1, flags
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, flags
		case c == '\\':
			flags |= Escaped
			if j+1 >= len(b) {
				return -1, flags
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if len(b)-j < 6 || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) || !isHex(b[j+5]) {
					return -1, flags
				}
				j += 6
			default:
				return -1, flags
			}
		case c < 0x20:
			return -1, flags // a control character must be escaped
		case c >= 0x80:
			flags |= NonASCII
			j++
		default:
			j++
		}
	}
}

// notPlain has the high bit set in the byte of x (eight bytes of a string, the first in the low
// byte) that is a quote, a backslash, a control character or not ASCII, and may have it set in
// bytes after that one, but in no byte before it: a borrow only runs towards the high bytes, and
// only out of a byte that is marked. A subtraction also sets the high bit of some bytes at or
// above 0x80, which x marks anyway, so that none needs masking with its complement.
func notPlain(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := x ^ (ones * '"')
	bs := x ^ (ones * '\\')
	return ((q - ones) | (bs - ones) | (x - ones*0x20) | x) & highs
}

// load64 reads b[j:j+8] as a little-endian word, with one bounds check.
func load64(b []byte, j int) uint64 {
	b = b[j : j+8 : j+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanObject returns the index after the valid object starting at b[i], or -1.
func scanObject(b []byte, i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		end, _ := String(b, i)
		if end < 0 {
			return -1
		}
		i = Space(b, end)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		if i = Value(b, Space(b, i+1), depth); i < 0 {
			return -1
		}
		i = Space(b, i)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = Space(b, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// scanArray returns the index after the valid array starting at b[i], or -1.
func scanArray(b []byte, i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i = Value(b, i, depth); i < 0 {
			return -1
		}
		i = Space(b, i)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = Space(b, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// Space returns the index of the first byte at or after b[i] that is not JSON white space.
func Space(b []byte, i int) int {
	// One comparison passes over a byte that is not space, as most are.
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
