package anthropic

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodmix/nodmix/internal/llm"
)

// Blocks keep the order of their indices, whatever indices a server sends: a difference of
// two of them would overflow.
func TestBlocksOrderedByExtremeIndices(t *testing.T) {
	in := strings.Join([]string{
		`data: {"type":"message_start","message":{"usage":{"input_tokens":1}}}`,
		`data: {"type":"content_block_start","index":9223372036854775807,"content_block":{"type":"tool_use","id":"b","name":"second","input":{}}}`,
		`data: {"type":"content_block_start","index":-9223372036854775807,"content_block":{"type":"tool_use","id":"a","name":"first","input":{}}}`,
		`data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":2}}`,
		`data: {"type":"message_stop"}`,
	}, "\n\n") + "\n\n"
	events, err := collect(t, strings.NewReader(in), true)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Message == nil {
		t.Fatalf("no message: %+v", events)
	}
	var ids []string
	for _, p := range last.Message.Parts {
		if p.Kind == llm.KindToolCall {
			ids = append(ids, p.CallID)
		}
	}
	if diff := cmp.Diff([]string{"a", "b"}, ids); diff != "" {
		t.Errorf("call order (-want +got):\n%s", diff)
	}
}
