package mcphub

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// Every successful request to a server asks answered whether it was an answer; that question
// must not cost an allocation, while an error still needs errors.As.
func TestAnsweredSuccessDoesNotAllocate(t *testing.T) {
	var got bool
	if n := testing.AllocsPerRun(100, func() { got = answered(nil) }); n != 0 {
		t.Errorf("answered(nil) allocates %v objects, want 0", n)
	}
	if !got {
		t.Error("answered(nil) = false, want true")
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&jsonrpc.Error{Code: 1}, true},
		{errors.New("connection closed"), false},
	} {
		if got := answered(tc.err); got != tc.want {
			t.Errorf("answered(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// A result of one part, what most tools answer, is converted in one allocation: the result and
// its part together.
func TestFromCallResultAllocations(t *testing.T) {
	in := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: x"}}, IsError: true}
	var got *catalog.Result
	n := testing.AllocsPerRun(100, func() {
		var err error
		if got, err = fromCallResult(in); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Errorf("fromCallResult of one text part allocates %v objects, want at most 1", n)
	}
	want := &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "Echo: x"}}, IsError: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fromCallResult (-want +got):\n%s", diff)
	}
}

// A message alone, every answer to a call, is decoded into the message and its result, with its
// id: it is not put in a slice of one, as a batch is.
func TestDecodeMessageAloneAllocations(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":1000,"result":{"content":[{"type":"text","text":"Echo: x"}]}}`)
	var msg jsonrpc.Message
	n := testing.AllocsPerRun(100, func() {
		var batch []jsonrpc.Message
		var err error
		if msg, batch, _, err = decodeBatch(line); err != nil || batch != nil {
			t.Fatalf("decodeBatch = %v, %v", batch, err)
		}
	})
	// The response, its result's copy, and the id twice: jsonrpc.MakeID takes the number as a
	// float64 in an interface and keeps it as an int64 in another.
	if n > 4 {
		t.Errorf("decoding a response allocates %v objects, want at most 4", n)
	}
	if resp, ok := msg.(*jsonrpc.Response); !ok || resp.ID.Raw() != int64(1000) {
		t.Errorf("decodeBatch = %#v, want the response to 1000", msg)
	}
}
