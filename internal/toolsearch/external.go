package toolsearch

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"unicode"

	"github.com/nodmix/nodmix/internal/catalog"
)

// externalCap bounds a wrapped control text, in UTF-16 units.
const externalCap = 20000

// wrapExternal marks text that carries MCP or client metadata or results (reference §2.6.8):
// such text comes from outside nodmix and may try to instruct the model. The markers carry a fresh
// random id, so content cannot forge the closing marker, and marker look-alikes inside the content
// are defused as well.
func wrapExternal(text string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	body := defuseMarkers(text)
	if utf16Len(body) > externalCap {
		body = catalog.PrefixUTF16(body, externalCap) + "\n[truncated]"
	}
	return "<<<EXTERNAL_UNTRUSTED_CONTENT id=\"" + id + "\">>>\nSource: API\n---\n" + body +
		"\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\"" + id + "\">>>"
}

const markerWord = "external_untrusted_content"

// defuseMarkers replaces every spelling of the marker word, including full-width letters, with a
// neutral token.
func defuseMarkers(s string) string {
	runes := []rune(s)
	folded := make([]rune, len(runes))
	for i, r := range runes {
		switch {
		case r >= 0xFF21 && r <= 0xFF3A, r >= 0xFF41 && r <= 0xFF5A:
			r -= 0xFEE0
		case r == 0xFF3F:
			r = '_'
		}
		folded[i] = unicode.ToLower(r)
	}
	if !strings.Contains(string(folded), markerWord) {
		return s
	}
	word := []rune(markerWord)
	var out strings.Builder
	last := 0
	for i := 0; i+len(word) <= len(folded); i++ {
		if slices.Equal(folded[i:i+len(word)], word) {
			out.WriteString(string(runes[last:i]))
			out.WriteString("MARKER_SANITIZED")
			i += len(word) - 1
			last = i + 1
		}
	}
	out.WriteString(string(runes[last:]))
	return out.String()
}
