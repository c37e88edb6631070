package mcphub

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
