package ollama

import (
	"bytes"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
)

// FuzzDecodeStream feeds arbitrary bytes to Decode, as a stream and as one document: it must
// not panic, and every sequence must end in exactly one EventDone (the last event) or an error.
// The seed corpus is testdata/fuzz/FuzzDecodeStream: the recorded exchanges of testdata.
func FuzzDecodeStream(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte(`{"done":true}`))
	f.Add([]byte(`{"error":{"message":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, stream := range []bool{true, false} {
			ended := false
			for ev, err := range New().Decode(bytes.NewReader(data), stream) {
				if ended {
					t.Fatalf("event after the end: %+v, %v", ev, err)
				}
				if err != nil {
					ended = true
					continue
				}
				if ev.Kind == llm.EventDone {
					if ev.Message == nil {
						t.Fatal("done without a message")
					}
					ended = true
				}
			}
			if !ended {
				t.Fatalf("stream=%v: sequence ended without done or an error", stream)
			}
		}
	})
}
