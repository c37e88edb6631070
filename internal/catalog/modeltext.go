package catalog

import "strconv"

// MaxModelDescription bounds a tool's description as models are sent it up front, in UTF-16
// units. Real descriptions are a few thousand at most; a server that lists one of megabytes would
// otherwise make every direct-mode request too large for its provider, and every turn fail.
const MaxModelDescription = 16 << 10

// ModelDescription is t's description as a model is sent it among its tools: whole, or, past
// MaxModelDescription units, cut there with a note that says so.
func (t *Tool) ModelDescription() string {
	d := PrefixUTF16(t.Description, MaxModelDescription)
	if len(d) == len(t.Description) {
		return d
	}
	return d + " … (description cut at " + strconv.Itoa(MaxModelDescription) + " characters)"
}
