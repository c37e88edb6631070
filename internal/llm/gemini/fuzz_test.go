package gemini

import (
	"bytes"
	"testing"

	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

// FuzzDecodeStream feeds arbitrary bytes to Decode, as a stream and as one document: it must
// not panic, and every sequence must end in exactly one EventDone (the last event) or an error.
// The seed corpus is testdata/fuzz/FuzzDecodeStream: the recorded exchanges of testdata.
func FuzzDecodeStream(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("data: {}\n\n"))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"x","thoughtSignature":"s"}]},"finishReason":"STOP"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, stream := range []bool{true, false} {
			evs, err := llmtest.Collect(t, New().Decode(bytes.NewReader(data), stream))
			if err == nil && evs[len(evs)-1].Message == nil {
				t.Fatalf("stream=%v: done without a message", stream)
			}
		}
	})
}
