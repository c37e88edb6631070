package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodmix/nodmix/internal/llm"
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
			ended, calls := false, 0
			for ev, err := range d.Decode(bytes.NewReader(data), stream) {
				if ended {
					t.Fatalf("stream=%v: event after the end: %+v, %v", stream, ev, err)
				}
				if err != nil {
					ended = true
					continue
				}
				switch ev.Kind {
				case llm.EventToolCall:
					if ev.Index != calls {
						t.Fatalf("tool call index %d, want %d", ev.Index, calls)
					}
					calls++
				case llm.EventDone:
					ended = true
					checkDone(t, ev)
				}
			}
			if !ended {
				t.Fatalf("stream=%v: sequence ended without EventDone or an error", stream)
			}
		}
	})
}

func checkDone(t *testing.T, ev llm.Event) {
	t.Helper()
	if ev.Message == nil || ev.Message.Role != llm.RoleAssistant {
		t.Fatalf("done without an assistant message: %+v", ev)
	}
	for _, p := range ev.Message.Parts {
		if p.Kind == llm.KindToolCall && !json.Valid(p.Args) {
			t.Fatalf("tool call args are not JSON: %q", p.Args)
		}
		if p.Raw != nil && !json.Valid(p.Raw) {
			t.Fatalf("raw block is not JSON: %q", p.Raw)
		}
	}
	// Whatever was decoded can be sent back on the next step.
	req := llm.Request{Model: "m", Messages: []llm.Message{userText("q"), *ev.Message}}
	enc, err := New(Options{}).Encode(&req, llm.Patch{})
	if err != nil {
		t.Fatalf("encoding the decoded message: %v", err)
	}
	if !json.Valid(enc.Body) {
		t.Fatalf("encoded body is not JSON: %s", enc.Body)
	}
}
