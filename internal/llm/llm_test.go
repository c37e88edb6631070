package llm

import (
	"strings"
	"testing"
)

func TestMessageText(t *testing.T) {
	tests := []struct {
		name  string
		parts []Part
		want  string
	}{
		{"none", nil, ""},
		{"no text parts", []Part{{Kind: KindToolCall, Name: "f"}}, ""},
		{"one", []Part{{Kind: KindText, Text: "a"}}, "a"},
		{"one among others", []Part{{Kind: KindReasoning, Text: "r"}, {Kind: KindText, Text: "a"}, {Kind: KindText}}, "a"},
		{"several, in order", []Part{{Kind: KindText, Text: "a"}, {Kind: KindImage}, {Kind: KindText, Text: "b"}, {Kind: KindText, Text: "c"}}, "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Message{Role: RoleUser, Parts: tt.parts}
			if got := m.Text(); got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestMessageTextAllocations: a client's message may hold a million text parts, and joining them
// one at a time copies the text so far each time (quadratic); Text must copy once.
func TestMessageTextAllocations(t *testing.T) {
	m := Message{Role: RoleUser, Parts: make([]Part, 1000)}
	for i := range m.Parts {
		m.Parts[i] = Part{Kind: KindText, Text: "xy"}
	}
	var got string
	if n := testing.AllocsPerRun(10, func() { got = m.Text() }); n > 1 {
		t.Errorf("Text of 1000 parts allocates %v times, want at most 1", n)
	}
	if want := strings.Repeat("xy", 1000); got != want {
		t.Errorf("Text() has %d bytes, want %d", len(got), len(want))
	}
	one := Message{Parts: []Part{{Kind: KindImage}, {Kind: KindText, Text: "only"}}}
	if n := testing.AllocsPerRun(10, func() { got = one.Text() }); n != 0 || got != "only" {
		t.Errorf("Text of one text part = %q with %v allocations, want it as is with none", got, n)
	}
}
