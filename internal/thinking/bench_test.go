package thinking

import "testing"

// Map runs once per model call; ProfileFor once per directive and menu render.
func BenchmarkMap(b *testing.B) {
	t := Target{Provider: "anthropic", Model: "claude-sonnet-4-5", Direct: true, MaxTokens: 8192}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Map(t, High, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProfileFor(b *testing.B) {
	t := Target{Provider: "openrouter", Model: "anthropic/claude-opus-4.7"}
	b.ReportAllocs()
	for b.Loop() {
		_ = ProfileFor(t)
	}
}

func BenchmarkNormalizeThink(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, _ = NormalizeThink(" Extra_High ")
	}
}
