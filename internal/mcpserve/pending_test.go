package mcpserve

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestStdioHoldsReadsAtPendingLimit: once as many calls as the limit are unanswered, the
// connection reads nothing more until one is answered, so that a client that writes calls
// without reading the answers cannot make the SDK queue requests without bound.
func TestStdioHoldsReadsAtPendingLimit(t *testing.T) {
	var lines strings.Builder
	for i := range 40 {
		lines.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"ping"}` + "\n")
	}
	// An OS pipe is read by Read itself, with no goroutine of the connection's to race.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.WriteString(lines.String()); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	conn, err := (&lineTransport{in: r, out: io.Discard, max: 1024, pending: 2}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	read := func(ctx context.Context) (int64, error) {
		msg, err := conn.Read(ctx)
		if err != nil {
			return 0, err
		}
		return msg.(*jsonrpc.Request).ID.Raw().(int64), nil
	}
	for want := range int64(2) {
		if id, err := read(context.Background()); err != nil || id != want {
			t.Fatalf("read %d = %d, %v", want, id, err)
		}
	}
	// At the limit a read waits for room; one whose context has ended returns without taking
	// a message. (Its Done is nil, so that without the limit it would read the next line.)
	for range 3 {
		if id, err := read(endedContext{context.Background()}); !errors.Is(err, context.Canceled) {
			t.Fatalf("read at the limit = call %d, %v; want it held", id, err)
		}
	}
	// An answer makes room for the next call, which is the next line.
	if err := conn.Write(t.Context(), &jsonrpc.Response{ID: mustID(t, 0), Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if id, err := read(context.Background()); err != nil || id != 2 {
		t.Fatalf("read after an answer = %d, %v; want call 2", id, err)
	}
}

func mustID(t *testing.T, n float64) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(n)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// endedContext has ended, but reports no Done channel: the SDK's reads have none, and the line
// connection then reads on the caller's goroutine.
type endedContext struct{ context.Context }

func (endedContext) Done() <-chan struct{} { return nil }
func (endedContext) Err() error            { return context.Canceled }
