package thinking

import (
	"testing"
)

// fuzzTargets are the profiles every fuzzed level is checked against: one of each shape
// (binary, always-on binary, no off, off only, provider-owned default, compat efforts).
var fuzzTargets = []Target{
	{Provider: "zai", Model: "glm-5"},
	{Provider: "deepseek", Model: "deepseek-reasoner"},
	{Provider: "google", Model: "gemini-3-pro"},
	{Provider: "openai", Model: "gpt-4.1"},
	{Provider: "anthropic", Model: "claude-opus-4-7", Direct: true},
	{Provider: "openrouter", Model: "deepseek/deepseek-v4-pro"},
	{Provider: "ollama", Model: "gpt-oss:20b"},
	{Provider: "custom", API: "openai-responses", Model: "m", Reasoning: true, Efforts: []string{"none", "max"}},
}

// FuzzNormalizeThink checks that NormalizeThink never panics, that what it accepts is a
// canonical level, and that every profile can check it and remap it to a level Map accepts.
func FuzzNormalizeThink(f *testing.F) {
	for _, s := range []string{"high", "x_high", "extra high", "Think Harder", "ultrathink+", "", "default", "ultra", "\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, ok := NormalizeThink(s)
		if !ok {
			if l != "" {
				t.Fatalf("NormalizeThink(%q) = %q with ok false", s, l)
			}
			l = Level(s) // the profile methods must cope with any stored word too
		} else if !l.Valid() {
			t.Fatalf("NormalizeThink(%q) = %q, not a canonical level", s, l)
		}
		if IsClear(s) && ok {
			t.Fatalf("%q is both a clear word and a level", s)
		}
		for _, tg := range fuzzTargets {
			p := ProfileFor(tg)
			supported := p.Supports(l)
			if supported && !ok && !l.Valid() {
				t.Fatalf("%s supports non-level %q", p.Family, l)
			}
			n := p.Nearest(l)
			if l == "" {
				continue
			}
			if n == "" && p.Default != "" {
				t.Fatalf("%s: Nearest(%q) is empty", p.Family, l)
			}
			if n != "" && !p.Supports(n) {
				t.Fatalf("%s: Nearest(%q) = %q, which it does not support", p.Family, l, n)
			}
			if supported && p.Nearest(n) != n {
				t.Fatalf("%s: Nearest is not stable for %q: %q then %q", p.Family, l, n, p.Nearest(n))
			}
			if _, err := Map(tg, n, true); err != nil {
				t.Fatalf("%s: Map(Nearest(%q) = %q): %v", p.Family, l, n, err)
			}
		}
	})
}
