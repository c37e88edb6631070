package openaichat

import (
	"bytes"
	"testing"

	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// FuzzDecodeStream holds Decode to its contract on any input, streamed or whole: it never
// panics, it ends in EventDone or an error, and what it assembles can be sent back.
func FuzzDecodeStream(f *testing.F) {
	llmtest.AddRecorded(f, "testdata/stream/*.sse", "testdata/whole/*.json")
	all := New(Quirks{ReasoningContent: true, ReasoningDetails: true, DetailsCumulative: true, AutoToolChoiceWhenThinking: true})
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, stream := range []bool{true, false} {
			evs, err := llmtest.Collect(t, all.Decode(bytes.NewReader(in), stream))
			if err != nil {
				continue
			}
			llmtest.CheckSendBack(t, all, evs[len(evs)-1])
		}
	})
}
