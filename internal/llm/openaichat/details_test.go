package openaichat

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDetailsPieces: streamed reasoning_details pieces merge by index. OpenRouter sends further
// pieces, appended whatever they begin with; with DetailsCumulative (MiniMax), a piece that
// begins with the detail's text so far is that text grown, and only what it adds is new.
func TestDetailsPieces(t *testing.T) {
	piece := func(text string) json.RawMessage {
		return json.RawMessage(`[{"type":"reasoning.text","index":0,"text":` + string(mustJSON(text)) + `}]`)
	}
	for _, c := range []struct {
		name       string
		cumulative bool
		pieces     []string
		deltas     []string
		merged     string
	}{
		{"further pieces", false, []string{"ab", "cd"}, []string{"ab", "cd"}, "abcd"},
		{"further pieces that repeat the start", false, []string{"ab", "abc"}, []string{"ab", "abc"}, "ababc"},
		{"cumulative: the text so far", true, []string{"ab", "abcd", "abcdef"}, []string{"ab", "cd", "ef"}, "abcdef"},
		{"cumulative: a piece that adds nothing", true, []string{"ab", "ab", "abc"}, []string{"ab", "", "c"}, "abc"},
		{"cumulative quirk, further pieces", true, []string{"ab", "cd", "e"}, []string{"ab", "cd", "e"}, "abcde"},
		{"cumulative quirk, a mix", true, []string{"ab", "cd", "abcdef"}, []string{"ab", "cd", "ef"}, "abcdef"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := details{cumulative: c.cumulative}
			var deltas []string
			for _, p := range c.pieces {
				got, err := d.add(piece(p))
				if err != nil {
					t.Fatal(err)
				}
				deltas = append(deltas, got)
			}
			if diff := cmp.Diff(c.deltas, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			if got, want := string(d.raw()), string(piece(c.merged)); got != want {
				t.Errorf("merged = %s, want %s", got, want)
			}
		})
	}
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
