package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxNameLen is the longest model-facing tool name that every provider accepts.
const MaxNameLen = 64

// NamePattern is the rule of a model-facing tool name, which ValidName checks, as every error
// that refuses a name states it.
const NamePattern = "^[A-Za-z0-9_-]{1,64}$"

// ValidName reports whether name can be sent to a model as it is: it matches NamePattern.
// (Checked by hand: compiling that expression was a good part of the package's start-up, which
// every sandbox child pays.)
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// maxQuoted is the most of a value an error quotes.
const maxQuoted = 256

// quoteShort quotes s for an error, cut to its first maxQuoted bytes (on a rune boundary) when
// longer: an id or name of a catalog line can be megabytes long.
func quoteShort(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// ServerNameRule is the rule [ValidServerName] checks, as errors state it.
const ServerNameRule = "server name must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"

// ValidServerName reports whether name can name an MCP server (ServerNameRule). A server name is
// part of every model-facing name of its tools (mcp__<server>__<tool>), so it keeps to their
// characters, and it starts with a letter or digit: a name such as "-x" or "_x" would read as a
// flag on a command line, or run into the separator of mcp__.
func ValidServerName(name string) bool {
	return ValidName(name) && name[0] != '-' && name[0] != '_'
}

// ID builds a tool id from its parts: "<prefix>:<owner>:<name>".
func ID(src Source, owner, name string) string {
	if owner == "" {
		owner = "core"
	}
	return src.IDPrefix() + ":" + owner + ":" + name
}

// MCPName is the model-facing name of an MCP tool: "mcp__<server>__<tool>", made safe by SafeName.
func MCPName(server, tool string) string {
	return SafeName("mcp__"+server+"__"+tool, ID(SourceMCP, server, tool))
}

// SafeName returns name when it is a valid model-facing name. Otherwise it returns a deterministic
// replacement derived from the name and the tool id: illegal characters become "_", and a name that
// changed or is too long gets a short hash of the id so that two different ids never share it.
// The result depends only on its inputs, so it is the same on every start and in any arrival order.
func SafeName(name, id string) string {
	if ValidName(name) {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(id))
	suffix := "_" + hex.EncodeToString(sum[:])[:8]
	clean := b.String()
	if len(clean)+len(suffix) > MaxNameLen {
		clean = clean[:MaxNameLen-len(suffix)]
	}
	return clean + suffix
}
