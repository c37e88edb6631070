package mcphub

import (
	"regexp"
	"strings"
	"testing"
)

// serverNameRE is the rule validServerName spells out.
var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func TestValidServerName(t *testing.T) {
	for _, name := range []string{"", "a", "0", "github", "my-server.v2_x", "-a", "_a", ".a", "a b", "a/b",
		"é", "aé", "a\n", strings.Repeat("a", 64), strings.Repeat("a", 65), "A" + strings.Repeat(".", 63)} {
		if got, want := validServerName(name), serverNameRE.MatchString(name); got != want {
			t.Errorf("validServerName(%q) = %v, want %v", name, got, want)
		}
	}
}

func FuzzValidServerName(f *testing.F) {
	f.Add("github")
	f.Add("-x")
	f.Add(strings.Repeat("z", 64))
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := validServerName(name), serverNameRE.MatchString(name); got != want {
			t.Errorf("validServerName(%q) = %v, want %v", name, got, want)
		}
	})
}
