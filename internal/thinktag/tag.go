package thinktag

import "strings"

// maxTagLen bounds a reasoning tag, attributes included, so that a '<' in prose holds back at
// most this many bytes of a stream.
const maxTagLen = 128

type tagKind uint8

const (
	noTag    tagKind = iota
	openTag          // <think>
	emptyTag         // <think/>
	closeTag         // </think>
)

// tagNames are the reasoning tags local models use, in lower case.
var tagNames = [...]string{"think", "thinking", "thought"}

const maxNameLen = len("thinking")

// parseTag reads the reasoning tag that s may start with (s[0] is '<') and returns its kind and
// length. more reports that s ends before that is decided; with eof it is never set.
func parseTag(s string, eof bool) (kind tagKind, n int, more bool) {
	i := 1
	closing := i < len(s) && s[i] == '/'
	if closing {
		i++
	}
	start := i
	for i < len(s) && i-start <= maxNameLen && isLetter(s[i]) {
		i++
	}
	name := s[start:i]
	if i == len(s) {
		return noTag, 0, !eof && isNamePrefix(name)
	}
	if !isName(name) {
		return noTag, 0, false
	}
	if c := s[i]; c != '>' && c != '/' && !isBlank(c) {
		return noTag, 0, false
	}
	for ; i < len(s) && i < maxTagLen; i++ {
		switch s[i] {
		case '>':
			switch {
			case closing:
				return closeTag, i + 1, false
			case s[i-1] == '/':
				return emptyTag, i + 1, false
			}
			return openTag, i + 1, false
		case '<', '\n':
			return noTag, 0, false
		}
	}
	return noTag, 0, i == len(s) && i < maxTagLen && !eof
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isName(s string) bool {
	for _, n := range tagNames {
		if strings.EqualFold(s, n) {
			return true
		}
	}
	return false
}

func isNamePrefix(s string) bool {
	for _, n := range tagNames {
		if len(s) <= len(n) && strings.EqualFold(s, n[:len(s)]) {
			return true
		}
	}
	return false
}
