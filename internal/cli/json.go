package cli

import (
	"encoding/json"
	"io"
)

// writeJSON prints v as indented JSON with a trailing newline. HTML characters are not escaped:
// the output is read by programs and people, not browsers.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
