package mcpserve

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request in progress, and every one that begins after, ends when the binding stops its calls.
func TestStopCallsCancelsRequests(t *testing.T) {
	b := &binding{calls: map[uint64]context.CancelFunc{}}
	started := make(chan struct{})
	ended := make(chan error, 1)
	mw := b.middleware(func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	go func() {
		_, err := mw(t.Context(), "ping", nil)
		ended <- err
	}()
	<-started
	b.stopCalls()
	if err := <-ended; err == nil {
		t.Error("request in progress: no error after stopCalls")
	}
	late := b.middleware(func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		return nil, ctx.Err()
	})
	if _, err := late(t.Context(), "ping", nil); err == nil {
		t.Error("request begun after stopCalls: its context is not cancelled")
	}
	if len(b.calls) != 0 {
		t.Errorf("%d requests still tracked", len(b.calls))
	}
}

// The middleware wraps every request of every client: what it allocates is paid per request.
// Its own context (cancelCtx and cancel func) is all it may cost; the binding's stop must not
// add a second parent per request.
func TestMiddlewareAllocations(t *testing.T) {
	b := &binding{calls: map[uint64]context.CancelFunc{}}
	mw := b.middleware(func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		return nil, nil
	})
	ctx := context.Background()
	n := testing.AllocsPerRun(200, func() {
		if _, err := mw(ctx, "ping", nil); err != nil {
			t.Fatal(err)
		}
	})
	if n > 2 {
		t.Errorf("middleware allocates %v objects per request, want at most 2", n)
	}
	if len(b.calls) != 0 {
		t.Errorf("%d finished requests still tracked", len(b.calls))
	}
}
