package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitLead splits a tool description into its lead, the opening that says what the
// tool does, and the body after it. The lead ends where a docstring's summary does: at
// a blank line, or before a line that opens a section ("Args:", "Returns:",
// "IMPORTANT:") or a list item ("- x", "1. x"). Leading white space is dropped; lead
// and body together are the rest of desc, byte for byte. A description of one
// paragraph is all lead.
func splitLead(desc string) (lead, body string) {
	s := strings.TrimLeftFunc(desc, unicode.IsSpace)
	for i := strings.IndexByte(s, '\n'); i >= 0; {
		line := s[i+1:]
		next := strings.IndexByte(line, '\n')
		if next >= 0 {
			line = line[:next]
		}
		if t := strings.TrimSpace(line); t == "" || isSectionHeading(t) || isListItem(t) {
			return s[:i], s[i:]
		}
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return s, ""
}

// maxHeadingLen bounds a section heading: a longer line ending in ":" is a sentence
// that introduces what follows, and stays in the lead.
const maxHeadingLen = 32

// isSectionHeading reports whether a trimmed line is a heading such as "Args:",
// "Example usage:" or "IMPORTANT:": a few words of letters ending in a colon.
func isSectionHeading(t string) bool {
	name, ok := strings.CutSuffix(t, ":")
	if !ok || name == "" || len(t) > maxHeadingLen {
		return false
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && r != ' ' {
			return false
		}
	}
	return true
}

// isListItem reports whether a trimmed line starts a bulleted or numbered list item.
func isListItem(t string) bool {
	if r, size := utf8.DecodeRuneInString(t); (r == '-' || r == '*' || r == '•') && strings.HasPrefix(t[size:], " ") {
		return true
	}
	digits := 0
	for digits < len(t) && '0' <= t[digits] && t[digits] <= '9' {
		digits++
	}
	return digits > 0 && (strings.HasPrefix(t[digits:], ". ") || strings.HasPrefix(t[digits:], ") "))
}
