package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/agent"
)

// TestVisibleTextStreams: what a face receives for a step's answer deltas, tagged reasoning
// apart. A reply that is one <think> block never closed is the answer (the rescue rule of
// thinktag): its reasoning, already reported, is then delivered as answer text.
func TestVisibleTextStreams(t *testing.T) {
	type ev struct{ Kind, Text string }
	for _, tc := range []struct {
		name   string
		deltas []string
		want   []ev
	}{
		{"plain text", []string{"Hello", " there"}, []ev{{"text", "Hello"}, {"text", " there"}, {"step", ""}}},
		{"a closed block", []string{"<think>hm", "m</think>", "Four."},
			[]ev{{"reasoning", "hm"}, {"reasoning", "m"}, {"text", "Four."}, {"step", ""}}},
		{"one block never closed", []string{"<think>the answer", " is four"},
			[]ev{{"reasoning", "the answer"}, {"reasoning", " is four"}, {"text", "the answer is four"}, {"step", ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []ev
			v := &visibleText{next: func(e agent.Event) { got = append(got, ev{string(e.Kind), e.Text}) }}
			for _, d := range tc.deltas {
				v.observe(agent.Event{Kind: agent.EventText, Text: d})
			}
			v.observe(agent.Event{Kind: agent.EventStep})
			// A second step starts afresh.
			v.observe(agent.Event{Kind: agent.EventText, Text: "next"})
			want := append(tc.want, ev{"text", "next"})
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
