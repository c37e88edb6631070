package anthropic

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
	"github.com/nodmix/nodmix/internal/llm/llmtest"
)

const fuzzCorpus = "testdata/fuzz/FuzzDecodeStream"

// TestFuzzCorpus writes the recorded streams as FuzzDecodeStream's seed corpus under -update,
// and otherwise checks that every recording is in it.
func TestFuzzCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.sse"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		entry := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		path := filepath.Join(fuzzCorpus, strings.TrimSuffix(filepath.Base(f), ".sse"))
		if *update {
			if err := os.MkdirAll(fuzzCorpus, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(entry), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != entry {
			t.Errorf("%s is not %s as a seed (run with -update): %v", path, f, err)
		}
	}
}

// FuzzDecodeStream feeds arbitrary bytes to both decoders: they never panic, always end in
// EventDone or an error and yield nothing after it, and a Done message holds only JSON in
// Args and Raw, with tool calls numbered in order, and encodes again as the next step.
func FuzzDecodeStream(f *testing.F) {
	f.Add([]byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Add([]byte(`{"type":"message","content":[{"type":"tool_use","id":"t","name":"f","input":{"a":[1]}}],"stop_reason":"tool_use"}`))
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"x\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n"))
	d := New(Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, stream := range []bool{true, false} {
			evs, err := llmtest.Collect(t, d.Decode(bytes.NewReader(data), stream))
			calls := 0
			for _, ev := range evs {
				if ev.Kind == llm.EventToolCall {
					if ev.Index != calls {
						t.Fatalf("stream=%v: tool call index %d, want %d", stream, ev.Index, calls)
					}
					calls++
				}
			}
			if err == nil {
				llmtest.CheckSendBack(t, d, evs[len(evs)-1])
			}
		}
	})
}
