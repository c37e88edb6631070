package toolsearch

import (
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/untrusted"
)

// externalCap bounds a wrapped control text, in UTF-16 units.
const externalCap = 20000

// wrapExternal marks text that carries MCP or client metadata or results (reference §2.6.8):
// such text comes from outside nodmix and may try to instruct the model. The markers carry a fresh
// random id, so content cannot forge the closing marker, and marker look-alikes inside the content
// are defused as well.
func wrapExternal(text string) string {
	// Sanitizing before the cut keeps a marker from being defused in part.
	body := untrusted.Sanitize(text)
	if utf16Len(body) > externalCap {
		body = catalog.PrefixUTF16(body, externalCap) + "\n[truncated]"
	}
	return untrusted.Enclose(body, untrusted.OriginAPI, untrusted.NewMarkerID())
}
