package catalog

import (
	"math/rand/v2"
	"testing"
)

// TestPrefixUTF16Shortcuts: the shortcuts for short and ASCII text cut where counting every rune does.
func TestPrefixUTF16Shortcuts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	parts := []string{"a", "Z", " ", "é", "€", "😀", "\xff", "\xed\xa0\x80", "\xf0\x9f"}
	for range 20000 {
		var s string
		for range r.IntN(12) {
			s += parts[r.IntN(len(parts))]
		}
		for n := -1; n <= len(s)+1; n++ {
			if got, want := PrefixUTF16(s, n), prefixUTF16Runes(s, n); got != want {
				t.Fatalf("PrefixUTF16(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}
