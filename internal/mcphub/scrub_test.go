package mcphub

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScrubber(t *testing.T) {
	s := newScrubber(ServerConfig{
		URL:     "https://user:pw-secret@example.com/mcp?api_key=abc12345",
		Headers: map[string]string{"Authorization": "Bearer tok-98765", "X-Short": "ab"},
	}, nil)
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
		s := newScrubber(ServerConfig{Env: map[string]string{"A_TOKEN": envValue}, Headers: map[string]string{"B": headerValue}}, nil)
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

// Every env value of 4 bytes or more was masked in a server's stderr: LOG_LEVEL=info showed every
// "info" as ***. Values are masked when their names look secret or they are long enough to be a
// key; with inheritEnv, nodmix's own secret-looking variables are masked too.
func TestEnvMasking(t *testing.T) {
	cfg := ServerConfig{Command: "srv", InheritEnv: true, Env: map[string]string{
		"LOG_LEVEL":             "info",
		"NODE_ENV":              "production",
		"PORT":                  "3000",
		"GITHUB_TOKEN":          "ghp-short",
		"DB_PASSWORD":           "hunter2x",
		"REDIS_PASS":            "redis-pw",
		"AWS_SECRET_ACCESS_KEY": "aws-secret-value",
		"SESSION_ID":            "sess-42",
		"PRIVATE_KEY_PEM":       "pem-data",
		"X_AUTH":                "auth-val",
		"SOME_OPAQUE_SETTING":   "0123456789abcdef", // 16 bytes: long enough to be a key
		"DATABASE_URL":          "postgres://app:db-pw-9@db/app",
		"ABC":                   "abc", // under 4 bytes, never masked
	}}
	inherited := []string{"OPENAI_API_KEY=sk-nodmix-own", "HOME=/home/someone/long/path", "SHELL=/bin/sh", "PORT=4000"}
	s := newScrubber(cfg, inherited)
	tests := []struct{ in, want string }{
		{"level info: listening on 3000 in production", "level info: listening on 3000 in production"},
		{"token ghp-short", "token ***"},
		{"pw hunter2x / redis-pw", "pw *** / ***"},
		{"aws aws-secret-value", "aws ***"},
		{"session sess-42 key pem-data auth auth-val", "session *** key *** auth ***"},
		{"opaque 0123456789abcdef", "opaque ***"},
		{"db postgres://app:db-pw-9@db/app, pw db-pw-9", "db ***, pw …"},
		{"abc stays", "abc stays"},
		{"inherited sk-nodmix-own in /home/someone/long/path, port 4000", "inherited *** in /home/someone/long/path, port 4000"},
	}
	var got, want []string
	for _, tt := range tests {
		got, want = append(got, s.replace(tt.in)), append(want, tt.want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scrubbed (-want +got):\n%s", diff)
	}
}
