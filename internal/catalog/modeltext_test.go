package catalog

import (
	"strings"
	"testing"
	"unicode/utf16"
)

func TestModelDescription(t *testing.T) {
	long := strings.Repeat("é", MaxModelDescription+5)
	tests := []struct {
		name, in string
		units    int // of the kept text, before any note
		cut      bool
	}{
		{"short", "Create an issue.", 16, false},
		{"at the bound", strings.Repeat("a", MaxModelDescription), MaxModelDescription, false},
		{"past the bound", strings.Repeat("a", MaxModelDescription+1), MaxModelDescription, true},
		{"past the bound, two-byte runes", long, MaxModelDescription, true},
		{"astral runes are two units", strings.Repeat("😀", MaxModelDescription), MaxModelDescription, true},
	}
	const note = " … (description cut at 16384 characters)"
	for _, tt := range tests {
		got := (&Tool{Description: tt.in}).ModelDescription()
		kept, cut := strings.CutSuffix(got, note)
		if cut != tt.cut {
			t.Errorf("%s: cut = %v, want %v", tt.name, cut, tt.cut)
		}
		if n := len(utf16.Encode([]rune(kept))); n != tt.units {
			t.Errorf("%s: kept %d units, want %d", tt.name, n, tt.units)
		}
		if !strings.HasPrefix(tt.in, kept) {
			t.Errorf("%s: kept text is not a prefix of the description", tt.name)
		}
	}
}
