package catalog

import (
	"regexp"
	"strings"
	"testing"
)

// nameRE is NamePattern compiled: the rule as errors state it.
var nameRE = regexp.MustCompile(NamePattern)

// TestValidNameAgreesWithNamePattern: the hand-written check accepts exactly the names the rule
// errors print matches, so that no name is refused under a rule it keeps, or let through.
func TestValidNameAgreesWithNamePattern(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"", false},
		{"a", true},
		{"Z", true},
		{"0", true},
		{"_", true},
		{"-", true},
		{"mcp__github__create_issue", true},
		{"my-tool_V2", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"a.b", false},
		{"a b", false},
		{"a/b", false},
		{"a:b", false},
		{"é", false},
		{"aé", false},
		{"a\n", false}, // $ must not match before a final newline
		{"\na", false},
		{"a\x00", false},
		{"[", false},
		{"^", false},
		{"`", false},
		{"@", false},
		{"{", false},
	} {
		if got := ValidName(tc.name); got != tc.want {
			t.Errorf("ValidName(%q) = %v, want %v", tc.name, got, tc.want)
		}
		if got := nameRE.MatchString(tc.name); got != tc.want {
			t.Errorf("%s matches %q: %v, want %v", NamePattern, tc.name, got, tc.want)
		}
	}
	// Every byte, alone: the character class edges ('/' ':' '@' '[' '`' '{' around the ranges).
	for c := range 256 {
		if s := string([]byte{byte(c)}); ValidName(s) != nameRE.MatchString(s) {
			t.Errorf("byte %#x: ValidName %v, %s %v", c, ValidName(s), NamePattern, nameRE.MatchString(s))
		}
	}
}

// FuzzValidName: the hand-written check agrees with NamePattern for any input.
func FuzzValidName(f *testing.F) {
	f.Add("mcp__s__t")
	f.Add("a.b")
	f.Add(strings.Repeat("z", 65))
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := ValidName(name), nameRE.MatchString(name); got != want {
			t.Errorf("ValidName(%q) = %v, %s matches: %v", name, got, NamePattern, want)
		}
	})
}

// serverNameRE is the rule ValidServerName spells out, as ServerNameRule states it.
var serverNameRE = regexp.MustCompile(strings.TrimPrefix(ServerNameRule, "server name must match "))

func TestValidServerName(t *testing.T) {
	for _, name := range []string{"", "a", "0", "github", "my-server_v2", "-a", "_a", ".a", "a.b", "a b",
		"a/b", "é", "aé", "a\n", strings.Repeat("a", 64), strings.Repeat("a", 65), "A" + strings.Repeat("-", 63)} {
		if got, want := ValidServerName(name), serverNameRE.MatchString(name); got != want {
			t.Errorf("ValidServerName(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzValidServerName: the hand-written check agrees with the expression for any input.
func FuzzValidServerName(f *testing.F) {
	f.Add("github")
	f.Add("-x")
	f.Add(strings.Repeat("z", 64))
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := ValidServerName(name), serverNameRE.MatchString(name); got != want {
			t.Errorf("ValidServerName(%q) = %v, want %v", name, got, want)
		}
	})
}
