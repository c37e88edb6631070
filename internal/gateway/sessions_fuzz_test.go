package gateway

import (
	"errors"
	"slices"
	"testing"

	"github.com/nodmix/nodmix/internal/app"
)

// FuzzParsePatch: any body is either refused with a field-naming error or read into a patch of
// known keys; nothing panics.
func FuzzParsePatch(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"thinking":"high"}`, `{"thinking":null,"fast":true}`, `{"thinkingLevel":"x","thinking":"y"}`,
		`{"model":"zai/glm-4.6","verbose":"full","trace":"raw","reasoning":"stream"}`, `{"nope":1}`, `[]`, `"x"`,
		`{"fast":false}`, `{"verbose":{}}`, `{"thinking":"\u00e9"}`, ` {"thinking" : "low" } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := parsePatch(body)
		if err != nil {
			var br *badRequest
			var uf *unknownField
			if p != nil || !(errors.As(err, &br) || errors.As(err, &uf)) {
				t.Fatalf("parsePatch(%q) = %v, %v: an error must come alone and be a request error", body, p, err)
			}
			return
		}
		for k := range p {
			if !slices.Contains(app.PatchKeys, k) {
				t.Fatalf("parsePatch(%q) kept the unknown key %q", body, k)
			}
		}
	})
}
