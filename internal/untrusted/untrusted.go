// Package untrusted wraps text from outside nodmix (web pages, MCP and client results) for a model,
// and defuses marker look-alikes inside it so that the text cannot close the wrapper it sits in.
package untrusted

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Origin says where wrapped content came from; it picks the Source line inside the wrapper.
type Origin string

// Origins of external content. The values are what responses report as their source.
const (
	OriginWebSearch Origin = "web_search"
	OriginWebFetch  Origin = "web_fetch"
	OriginAPI       Origin = "api" // MCP and client tool metadata and results, as Tool Search shows them
)

func (o Origin) label() string {
	switch o {
	case OriginWebSearch:
		return "Web Search"
	case OriginWebFetch:
		return "Web Fetch"
	case OriginAPI:
		return "API"
	default:
		return "External"
	}
}

// Marker replacements: what a look-alike marker inside external content becomes.
const (
	SanitizedStart = "[[MARKER_SANITIZED]]"
	SanitizedEnd   = "[[END_MARKER_SANITIZED]]"
)

// NewMarkerID returns a fresh random marker id (16 hex digits). Every wrap gets its own, so a page
// cannot close the wrapper it sits in: it would have to guess the id.
func NewMarkerID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail on supported platforms
	return hex.EncodeToString(b[:])
}

// Wrap encloses external content in untrusted-content markers with a fresh random id:
//
//	<<<EXTERNAL_UNTRUSTED_CONTENT id="<id>">>>
//	Source: Web Search
//	---
//	<sanitized text>
//	<<<END_EXTERNAL_UNTRUSTED_CONTENT id="<id>">>>
func Wrap(text string, o Origin) string { return WrapWithID(text, o, NewMarkerID()) }

// WrapWithID is Wrap with a given marker id, for deterministic output in tests and golden files.
// id should come from NewMarkerID in production.
func WrapWithID(text string, o Origin, id string) string { return Enclose(Sanitize(text), o, id) }

// Enclose is WrapWithID for text that Sanitize has already been through, for a caller that cuts
// the sanitized text to a size before wrapping it.
func Enclose(sanitized string, o Origin, id string) string {
	var b strings.Builder
	b.Grow(len(sanitized) + 2*len(id) + 110)
	b.WriteString(`<<<EXTERNAL_UNTRUSTED_CONTENT id="`)
	b.WriteString(id)
	b.WriteString("\">>>\nSource: ")
	b.WriteString(o.label())
	b.WriteString("\n---\n")
	b.WriteString(sanitized)
	b.WriteString("\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\"")
	b.WriteString(id)
	b.WriteString(`">>>`)
	return b.String()
}

// markerPattern matches the head of a marker look-alike in folded text: any case, spaces,
// underscores or hyphens between the words. markerTail extends a match over an id and the closing
// brackets.
var markerPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)<<<[\s_-]*(END[\s_-]*)?EXTERNAL[\s_-]*UNTRUSTED[\s_-]*CONTENT`)
})

// maxMarkerTail bounds how far past the head a marker's closing ">>>" is looked for.
const maxMarkerTail = 128

// markerTail returns where a marker whose head ends at i ends: after the first ">>>" within
// maxMarkerTail characters on the same line with no other bracket before it, else i itself.
// (The same as a regexp tail (?:[^<>\n]{0,128}>>>)?, which made matching ten times slower.)
func markerTail(folded string, i int) int {
	for n, j := 0, i; j < len(folded) && n <= maxMarkerTail; n++ {
		switch c := folded[j]; c {
		case '<', '\n':
			return i
		case '>':
			if strings.HasPrefix(folded[j:], ">>>") {
				return j + 3
			}
			return i
		default:
			_, w := utf8.DecodeRuneInString(folded[j:])
			j += w
		}
	}
	return i
}

// Sanitize replaces everything in text that a model could take for a wrapper marker, including
// look-alikes spelt with full-width, Cyrillic or Greek letters, dashes, Unicode spaces, Unicode
// angle brackets or invisible characters.
// Text without such a look-alike is returned unchanged.
func Sanitize(text string) string {
	if !mayHoldMarker(text) {
		return text
	}
	folded, offsets := fold(text)
	matches := markerPattern().FindAllStringSubmatchIndex(folded, -1)
	if len(matches) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	cursor := 0
	for _, m := range matches {
		start, end := offsets[m[0]], offsets[markerTail(folded, m[1])]
		b.WriteString(text[cursor:start])
		if m[2] >= 0 {
			b.WriteString(SanitizedEnd)
		} else {
			b.WriteString(SanitizedStart)
		}
		cursor = end
	}
	b.WriteString(text[cursor:])
	return b.String()
}

// mayHoldMarker is the cheap test that keeps Sanitize allocation-free for ordinary text: a marker
// starts with three opening brackets in a row once folded (invisible characters between them fold
// away). One bracket is not enough: HTML and code hold them everywhere, and folding a page costs
// nine times its size.
func mayHoldMarker(text string) bool {
	run := 0 // opening brackets in a row in the folded text
	for i := 0; i < len(text); {
		// ASCII, nearly all of most text, is told apart byte by byte without decoding.
		if c := text[i]; c < utf8.RuneSelf {
			if c != '<' {
				run = 0
			} else if run++; run >= 3 {
				return true
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(text[i:])
		i += w
		f, ok := foldRune(r)
		switch {
		case !ok:
			run = 0
		case f == "": // invisible: folded away, the run goes on
		case strings.Trim(f, "<") == "":
			run += len(f)
		default:
			run = 0
		}
		if run >= 3 {
			return true
		}
	}
	return false
}

// fold maps look-alike characters to ASCII and drops invisible ones. offsets[i] is the byte offset
// in text of the character that produced folded byte i; offsets[len(folded)] is len(text). Matches
// start and end on character boundaries of folded, so both ends map back exactly.
func fold(text string) (string, []int) {
	var b strings.Builder
	b.Grow(len(text))
	offsets := make([]int, 0, len(text)+1)
	for i, r := range text {
		f, ok := foldRune(r)
		if !ok {
			// Decoding again tells an invalid byte (width 1) from a real U+FFFD (width 3).
			_, w := utf8.DecodeRuneInString(text[i:])
			b.WriteString(text[i : i+w])
			for range w {
				offsets = append(offsets, i)
			}
			continue
		}
		b.WriteString(f)
		for range len(f) {
			offsets = append(offsets, i)
		}
	}
	offsets = append(offsets, len(text))
	return b.String(), offsets
}

// foldRune returns the ASCII a look-alike stands for ("" for invisible characters), and false for
// characters that stand for themselves. Case does not matter: the marker pattern ignores it.
func foldRune(r rune) (string, bool) {
	switch {
	case r < 0x80:
		return "", false
	case r >= lookalikeFirst && r < lookalikeFirst+rune(len(lookalikes)):
		if c := lookalikes[r-lookalikeFirst]; c != 0 {
			return ascii(c), true
		}
		return "", false
	case r >= 0xFF21 && r <= 0xFF3A, r >= 0xFF41 && r <= 0xFF5A: // full-width letters
		return ascii(byte(r - 0xFEE0)), true
	}
	switch r {
	case 0xFF3F: // full-width low line
		return "_", true
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2043, 0x2212, 0x2E3A, 0x2E3B, 0xFE58, 0xFE63, 0xFF0D:
		return "-", true
	case 0x00A0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
		0x202F, 0x205F, 0x3000:
		return " ", true
	case 0xFF1C, 0x2329, 0x3008, 0x2039, 0x27E8, 0xFE64, 0x276C, 0x276E, 0x02C2:
		return "<", true
	case 0xFF1E, 0x232A, 0x3009, 0x203A, 0x27E9, 0xFE65, 0x276D, 0x276F, 0x02C3:
		return ">", true
	case 0x00AB, 0x300A: // « and 《 read as a double bracket
		return "<<", true
	case 0x00BB, 0x300B:
		return ">>", true
	case 0x00AD, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF:
		return "", true
	}
	return "", false
}

// printable holds the printable ASCII characters, so that a folded letter is a slice of a constant
// and folding a character never allocates.
const printable = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

func ascii(c byte) string { return printable[c-' ' : c-' '+1] }

// lookalikeFirst is the first character of the Greek and Cyrillic blocks, which lookalikes covers.
const lookalikeFirst = 0x0370

// lookalikes maps a Greek or Cyrillic letter that a reader takes for a Latin one to that letter
// (0 for the others): with them a marker can be spelt that neither a regexp nor a glance tells
// from the real one. Letters outside the marker's words are kept so that the table reads as the
// look-alike list it is, and costs nothing.
var lookalikes = func() (t [0x0530 - lookalikeFirst]byte) {
	for _, l := range []struct {
		latin byte
		runes string
	}{
		{'a', "АаΑα"}, {'b', "ВвΒ"}, {'c', "СсϹϲ"}, {'d', "ԁ"}, {'e', "ЕеΕε"}, {'h', "НнΗһ"},
		{'i', "ІіΙι"}, {'j', "Јј"}, {'k', "КкΚκ"}, {'l', "Ӏӏ"}, {'m', "МмΜ"}, {'n', "Νη"},
		{'o', "ОоΟο"}, {'p', "РрΡρ"}, {'r', "г"}, {'s', "Ѕѕ"}, {'t', "ТтΤτ"}, {'u', "υ"},
		{'v', "ν"}, {'x', "ХхΧχ"}, {'y', "УуΥҮү"}, {'z', "Ζ"},
	} {
		for _, r := range l.runes {
			t[r-lookalikeFirst] = l.latin
		}
	}
	return t
}()
