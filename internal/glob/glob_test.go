package glob

import (
	"path"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "nodmix:core:exec", true},
		{"*", "", true},
		{"", "", false},
		{"", "x", false},
		{"mcp:*", "mcp:github:create_issue", true},
		{"mcp:*", "nodmix:core:exec", false},
		{"mcp:github:*", "mcp:github:create_issue", true},
		{"mcp:github:*", "mcp:gitlab:create_issue", false},
		{"*:create_*", "mcp:github:create_issue", true},
		{"*:create_*", "nodmix:core:read_file", false},
		{"*issue", "mcp:github:create_issue", true},
		{"*issue", "mcp:github:create_issues", false},
		{"exec", "exec", true},
		{"exec", "exec2", false},
		{"exe?", "exec", true},
		{"exe?", "exe", false},
		{"?", "é", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"a**c", "ac", true},
		{"mcp__*__delete_*", "mcp__fs__delete_file", true},
		{"[abc]x", "bx", true},
		{"[abc]x", "dx", false},
		{"[a-c]x", "cx", true},
		{"[!a-c]x", "cx", false},
		{"[^a-c]x", "dx", true},
		{"[]]", "]", true},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`a\?`, "a?", true},
		{"[", "[", false},
		{`x\`, `x\`, false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		pattern string
		wantErr string
	}{
		{"mcp:*", ""},
		{"[a-z]*", ""},
		{`\[`, ""},
		{"", "must not be empty"},
		{"mcp:[x", "unterminated character class"},
		{`abc\`, "ends with a lone backslash"},
		{`[a\`, "ends with a lone backslash"},
	}
	for _, tt := range tests {
		err := Validate(tt.pattern)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.wantErr {
			t.Errorf("Validate(%q) = %q, want %q", tt.pattern, got, tt.wantErr)
		}
	}
}

// FuzzMatch checks that matching never panics, that a pattern without metacharacters matches only
// itself, and that where path.Match is defined and neither '/' nor non-ASCII text plays a part,
// both agree.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"mcp:*", "mcp:github:create_issue"},
		{"*:create_*", "nodmix:core:create"},
		{"[a-c]?x*", "bqxyz"},
		{`\*[]]`, "*]"},
		{"a*b*c*d", "aXbXcXd"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got := Match(pattern, name)
		valid := Validate(pattern) == nil
		if !valid && got {
			t.Fatalf("malformed pattern %q matched %q", pattern, name)
		}
		if valid && pattern != "" && !strings.ContainsAny(pattern, `*?[\`) && got != (pattern == name) {
			t.Fatalf("literal pattern %q vs %q: got %v", pattern, name, got)
		}
		// path.Match lets '*' stop inside a multi-byte character, so compare on ASCII only.
		if strings.Contains(pattern+name, "/") || strings.Contains(pattern, "[!") || !valid || !isASCII(pattern+name) {
			return
		}
		want, err := path.Match(pattern, name)
		if err == nil && want != got {
			t.Fatalf("Match(%q, %q) = %v, path.Match says %v", pattern, name, got, want)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
