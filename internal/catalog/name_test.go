package catalog

import (
	"regexp"
	"strings"
	"testing"
)

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
