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
// look-alikes spelt with full-width, mathematical, enclosed, accented, Cyrillic or Greek letters,
// dashes, Unicode spaces, Unicode angle brackets, combining marks or invisible characters.
// Text without such a look-alike is returned unchanged, and the text around one byte for byte.
// Invisible tag characters are read both ways: dropped (inside a marker, to break its match) and
// as the ASCII they encode (a marker spelt in them).
func Sanitize(text string) string {
	text = sanitize(text, false)
	if mayHoldTags(text) {
		text = sanitize(text, true)
	}
	return text
}

func sanitize(text string, tags bool) string {
	if !mayHoldMarker(text, tags) {
		return text
	}
	folded, offsets := fold(text, tags)
	matches := markerPattern().FindAllStringSubmatchIndex(folded, -1)
	if len(matches) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	cursor := 0
	for _, m := range matches {
		// The end is taken after the match's last character, not before the next one's folded
		// byte: characters folded away after a marker (a mark, a zero-width space) are not its.
		start, end := offsets[m[0]], offsets[markerTail(folded, m[1])-1]
		_, w := utf8.DecodeRuneInString(text[end:])
		end += w
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
