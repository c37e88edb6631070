package openaichat

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// FuzzDecodeStream holds Decode to its contract on any input, streamed or whole: it never
// panics, it ends in EventDone or an error, and what it assembles can be sent back.
func FuzzDecodeStream(f *testing.F) {
	for _, glob := range []string{"testdata/stream/*.sse", "testdata/whole/*.json"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	all := New(Quirks{ReasoningContent: true, ReasoningDetails: true, AutoToolChoiceWhenThinking: true})
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
