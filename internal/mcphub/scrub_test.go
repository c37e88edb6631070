package mcphub

import (
	"errors"
	"strings"
	"testing"
)

func TestScrubber(t *testing.T) {
	s := newScrubber(ServerConfig{
		URL:     "https://user:pw-secret@example.com/mcp?api_key=abc12345",
		Headers: map[string]string{"Authorization": "Bearer tok-98765", "X-Short": "ab"},
	})
	tests := []struct{ in, want string }{
		{`Post "https://user:pw-secret@example.com/mcp?api_key=abc12345": EOF`, `Post "https://example.com/mcp?…": EOF`},
		{"header Bearer tok-98765 rejected", "header *** rejected"},
		{"token tok-98765 alone", "token *** alone"},
		{"key=abc12345", "key=…"},
		{"a short value ab stays", "a short value ab stays"},
	}
	for _, tt := range tests {
		if got := s.replace(tt.in); got != tt.want {
			t.Errorf("replace(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	base := errors.New("dial pw-secret failed")
	err := s.err(base)
	if err.Error() != "dial *** failed" || !errors.Is(err, base) {
		t.Errorf("err = %q (is base: %v)", err, errors.Is(err, base))
	}
	if clean := errors.New("nothing secret"); s.err(clean) != clean {
		t.Error("an error without secrets was wrapped")
	}
}

// FuzzScrub checks that no secret survives scrubbing, whatever surrounds it.
func FuzzScrub(f *testing.F) {
	f.Add("s3cret-token", "Bearer s3cret", "failed: Bearer s3cret-token (s3cret)")
	f.Add("abab", "baba", "ababababa")
	f.Add("key=1234", "1234", "https://h/?key=1234&x=1234")
	f.Fuzz(func(t *testing.T, envValue, headerValue, text string) {
		s := newScrubber(ServerConfig{Env: map[string]string{"A": envValue}, Headers: map[string]string{"B": headerValue}})
		out := s.replace(text)
		for _, secret := range []string{envValue, headerValue} {
			// Masks are made of '*' and '…'; a secret containing them could be re-formed by a mask.
			if len(secret) < 4 || strings.ContainsAny(secret, "*…") {
				continue
			}
			if strings.Contains(out, secret) {
				t.Fatalf("replace(%q) = %q still holds %q", text, out, secret)
			}
		}
	})
}
