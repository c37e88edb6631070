package openairesp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
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
	all := New()
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, stream := range []bool{true, false} {
			evs, err := llmtest.Collect(t, all.Decode(bytes.NewReader(in), stream))
			if err != nil {
				continue
			}
			done := evs[len(evs)-1]
			if done.Message == nil || done.Message.Role != llm.RoleAssistant {
				t.Fatalf("EventDone without an assistant message: %+v", done)
			}
			for _, p := range done.Message.Parts {
				if p.Kind == llm.KindToolCall && !json.Valid(p.Args) {
					t.Fatalf("call args not JSON: %q", p.Args)
				}
				if len(p.Raw) > 0 && !json.Valid(p.Raw) {
					t.Fatalf("raw not JSON: %q", p.Raw)
				}
			}
			req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.KindText, Text: "q"}}}, *done.Message}}
			if _, err := all.Encode(&req, llm.Patch{}); err != nil {
				t.Fatalf("a decoded message does not encode: %v", err)
			}
		}
	})
}
