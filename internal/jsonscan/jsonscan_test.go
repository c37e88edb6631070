package jsonscan

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strings"
	"testing"
)

// checkValid: the one-pass scanner accepts exactly what encoding/json does.
func checkValid(t *testing.T, b []byte) {
	t.Helper()
	if got, want := Valid(b), json.Valid(b); got != want {
		t.Fatalf("Valid(%q) = %v, json.Valid says %v", b, got, want)
	}
}

func TestValidJSON(t *testing.T) {
	for _, s := range []string{
		``, ` `, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `.5`, `+1`, `-01`, `1.5e3x`,
		`true`, `tru`, `truex`, `nul`, `null `, ` false`, `"a"`, `"`, `"\"`, `"\u00e9"`, `"\u00g9"`, `"\x"`,
		"\"\x01\"", "\"\x7f\"", "\"\xff\"", `"\/\b\f\n\r\t\\"`, `{}`, `{ }`, `{"a":1}`, `{"a":1,}`, `{"a"}`,
		`{"a":}`, `{,}`, `{1:2}`, `[]`, `[ ]`, `[1,]`, `[,1]`, `[1 2]`, `[[[]]]`, `[[[]]`, `{"a":[{"b":null}]}`,
		`{"a":1}}`, `{"a":1} {}`, "\t{\r\n}\n", `[1,{"x":[true,false,null,"s",-1.25e-3]}]`,
	} {
		checkValid(t, []byte(s))
	}
	// Every kind of byte at every offset of the eight-byte steps through a string.
	for k := range 20 {
		for _, c := range []string{`"`, `\`, `\"`, `\u00e9`, `\u12`, `\q`, "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xff"} {
			for _, tail := range []string{`"`, `x"`, ``, `abcdefghij"`} {
				checkValid(t, []byte(`"`+strings.Repeat("a", k)+c+tail))
			}
		}
	}
	for _, n := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		checkValid(t, []byte(strings.Repeat("[", n)+strings.Repeat("]", n)))
		checkValid(t, []byte(strings.Repeat(`{"a":`, n)+"1"+strings.Repeat("}", n)))
		checkValid(t, []byte(`{"id":"a","input_schema":`+strings.Repeat("[", n)+strings.Repeat("]", n)+"}"))
	}
}

func FuzzScanValue(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"q":{"type":"string","enum":["a\u00e9",1.5e-3,true,null]}}}`))
	f.Add([]byte(`[1,[2,{"a":"\\\"x"}],-0.0E+1]`))
	f.Fuzz(func(t *testing.T, b []byte) { checkValid(t, b) })
}

// TestNotPlain: the first byte notPlain marks is the first byte that is not plain text, for every
// byte value at every position, after plain bytes and before any bytes.
func TestNotPlain(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c != '"' && c != '\\' && c < 0x80 }
	var w [8]byte
	for pos := range 8 {
		for c := range 256 {
			for _, after := range []byte{'a', 0, '"', 0xff, 0x1f} {
				for k := range w {
					switch {
					case k < pos:
						w[k] = byte(' ' + (k*37+c)%95) // plain
					case k == pos:
						w[k] = byte(c)
					default:
						w[k] = after
					}
				}
				want := 8
				for k, b := range w {
					if !plain(b) {
						want = k
						break
					}
				}
				got := 8
				if m := notPlain(binary.LittleEndian.Uint64(w[:])); m != 0 {
					got = bits.TrailingZeros64(m) >> 3
				}
				if got != want {
					t.Fatalf("%q: first not plain at %d, want %d", w, got, want)
				}
			}
		}
	}
}
