package mcpwire

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInexactID is returned by DecodeExact for a request whose id the SDK's jsonrpc.ID would not
// carry back as sent. The ID holds an int64 or a string: a number is read as a float64 and cut
// to an integer (1.5 comes back as 1, 1e3 as 1000, -0 as 0, an integer beyond 2^53 rounded or
// beyond int64 clamped), and a string is read as Go text (invalid UTF-8 and unpaired surrogate
// escapes come back as U+FFFD). MCP allows only string and integer ids, and JSON-RPC says numbers
// should have no fractional part; an integer beyond ±(2^53−1) is not interoperable JSON (RFC
// 7493, I-JSON).
var ErrInexactID = errors.New("invalid id")

// maxExactInt is the largest integer every JSON reader (a float64) holds exactly.
const maxExactInt = 1<<53 - 1

// CheckID checks an id as it was written, a JSON string or number, as DecodeExact does: an
// error wrapping ErrInexactID means the SDK would not give it back as sent. A transport that
// answers a message it could not decode uses it to decide whether it can echo the id.
func CheckID(raw []byte) error {
	if len(raw) == 0 || (raw[0] != '"' && raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return fmt.Errorf("%w: an id must be a string or an integer", ErrInexactID)
	}
	return exactID(raw)
}

// exactID checks a request's id as it was written (valid JSON: a string or a number; the
// decoders refuse other types).
func exactID(raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		if !exactString(raw) {
			return fmt.Errorf("%w: a string id must be valid UTF-8 with no unpaired surrogate escape, or it does not come back as sent", ErrInexactID)
		}
		return nil
	}
	if !exactInteger(raw) {
		shown := raw
		if len(shown) > 32 {
			shown = append(shown[:32:32], "..."...)
		}
		return fmt.Errorf("%w %s: a number id must be an integer written without fraction, exponent or minus zero, within ±%d, or it does not come back as sent", ErrInexactID, shown, maxExactInt)
	}
	return nil
}

// exactInteger reports whether a JSON number is an integer in plain notation within
// ±maxExactInt, and not -0.
func exactInteger(raw []byte) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 16 { // maxExactInt has 16 digits
		return false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) > 1 && digits[0] == '0' {
		return false // not valid JSON; the decoders never pass it
	}
	if n == 0 && len(digits) != len(raw) {
		return false // -0
	}
	return n <= maxExactInt
}

// exactString reports whether a JSON string decodes to text that encodes back to the same
// characters: valid UTF-8, and every \u escape of a surrogate one of a pair.
func exactString(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	text := raw[1 : len(raw)-1]
	for i := 0; i < len(text); i++ {
		if text[i] != '\\' {
			continue
		}
		i++
		if i >= len(text) || text[i] != 'u' {
			continue
		}
		r, ok := hex4(text[i+1:])
		if !ok {
			return false
		}
		i += 4
		if !utf16.IsSurrogate(r) {
			continue
		}
		// A high surrogate must be followed by an escaped low one.
		if r >= 0xDC00 || i+2 >= len(text) || text[i+1] != '\\' || text[i+2] != 'u' {
			return false
		}
		low, ok := hex4(text[i+3:])
		if !ok || utf16.DecodeRune(r, low) == utf8.RuneError {
			return false
		}
		i += 6
	}
	return true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
