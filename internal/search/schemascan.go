package search

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

// maxJSONDepth is encoding/json's nesting limit: a document nested deeper is not valid to it.
const maxJSONDepth = 10000

// scan validates b as encoding/json.Valid does, records where every value and key of b
// ends (see rawSchema.ends), and reports in fit whether every number fits a float64, as
// decoding into any needs. One pass does what json.Valid and a walk of the structure did
// in two.
func (p *rawSchema) scan() (valid, fit bool) {
	b := p.b
	if cap(p.ends) < len(b) {
		p.ends = make([]int32, len(b))
	}
	ends := p.ends[:len(b)]
	p.mbuf = p.mbuf[:0]
	var stackBuf [32]int32 // open containers, by the position of their bracket
	stack := stackBuf[:0]
	fit = true
	i := 0
value:
	i = skipJSONSpace(b, i)
	if i == len(b) {
		return false, fit
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		if len(stack) == maxJSONDepth {
			return false, fit
		}
		stack = append(stack, int32(i))
		open := i
		i = skipJSONSpace(b, i+1)
		if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
			stack = stack[:len(stack)-1]
			i++
			ends[open] = int32(i)
			goto after
		}
		if c == '{' {
			if i = scanKey(b, i, ends); i < 0 {
				return false, fit
			}
		}
		goto value
	case c == '"':
		if i = scanString(b, i, ends); i < 0 {
			return false, fit
		}
	case c == '-' || ('0' <= c && c <= '9'):
		j, exp := scanNumber(b, i)
		if j < 0 {
			return false, fit
		}
		if fit && (j-i > 300 || exp) {
			if _, err := strconv.ParseFloat(string(b[i:j]), 64); err != nil {
				fit = false
			}
		}
		ends[i] = int32(j)
		i = j
	case c == 't' || c == 'f' || c == 'n':
		lit := "true"
		if c == 'f' {
			lit = "false"
		} else if c == 'n' {
			lit = "null"
		}
		j := scanLiteral(b, i, lit)
		if j < 0 {
			return false, fit
		}
		ends[i] = int32(j)
		i = j
	default:
		return false, fit
	}
after:
	i = skipJSONSpace(b, i)
	if len(stack) == 0 {
		return i == len(b), fit
	}
	if i == len(b) {
		return false, fit
	}
	open := stack[len(stack)-1]
	top := b[open]
	switch b[i] {
	case ',':
		i++
		if top == '{' {
			if i = scanKey(b, skipJSONSpace(b, i), ends); i < 0 {
				return false, fit
			}
		}
		goto value
	case top + 2:
		stack = stack[:len(stack)-1]
		i++
		ends[open] = int32(i)
		goto after
	}
	return false, fit
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanKey checks an object key and its colon at i, returning the index after the colon,
// or -1.
func scanKey(b []byte, i int, ends []int32) int {
	if i == len(b) || b[i] != '"' {
		return -1
	}
	if i = scanString(b, i, ends); i < 0 {
		return -1
	}
	i = skipJSONSpace(b, i)
	if i == len(b) || b[i] != ':' {
		return -1
	}
	return i + 1
}

// scanString checks the string starting at b[i] == '"', returning the index after it, or -1.
// As for encoding/json, any byte from 0x20 up is allowed, valid UTF-8 or not. It records the
// end in ends[i], negated when the string has a backslash or a byte from 0x80 up (see
// rawSchema.ends).
func scanString(b []byte, i int, ends []int32) int {
	plain := true
	for j := skipPlainString(b, i+1); j < len(b); j = skipPlainString(b, j+1) {
		switch c := b[j]; {
		case c == '"':
			if plain {
				ends[i] = int32(j + 1)
			} else {
				ends[i] = -int32(j + 1)
			}
			return j + 1
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			j++
			if j == len(b) {
				return -1
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return -1
				}
				for _, h := range b[j+1 : j+5] {
					if !isHex(h) {
						return -1
					}
				}
				j += 4
			default:
				return -1
			}
		case c < 0x20:
			return -1
		}
	}
	return -1
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// scanNumber checks the number starting at i, returning the index after it (or -1) and
// whether it has an exponent.
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i == len(b):
		return -1, false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		digits()
	default:
		return -1, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return -1, false
		}
	}
	exp := false
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		exp = true
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return -1, false
		}
	}
	return i, exp
}

func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// Bit tricks on eight bytes at a time (Hacker's Delight; Anderson's bit hacks).
const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// swarHasZero is nonzero when a byte of x is zero.
func swarHasZero(x uint64) uint64 { return (x - swarOnes) &^ x & swarHigh }

// swarHasLess is nonzero when a byte of x is less than n, for n up to 128.
func swarHasLess(x uint64, n byte) uint64 { return (x - swarOnes*uint64(n)) &^ x & swarHigh }

// skipPlainString returns the first index from i of a byte that is a quote, a backslash,
// below 0x20 or from 0x80 up: the bytes a string scan must look at. It reads eight bytes at
// a time; in the last seven of b it returns i, whatever the byte. (A flagged byte of the
// tests below is a match or above one: the lowest is a match.)
func skipPlainString(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := swarHasZero(x^(swarOnes*'"')) | swarHasZero(x^(swarOnes*'\\')) | swarHasLess(x, 0x20) | x&swarHigh; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	return i
}
