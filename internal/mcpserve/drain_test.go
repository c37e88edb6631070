package mcpserve

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// answerIDs are the ids of the responses in out, in the order they were written.
func answerIDs(t *testing.T, out string) []float64 {
	t.Helper()
	var ids []float64
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("output line is not JSON: %q", sc.Text())
		}
		if id, ok := m["id"].(float64); ok {
			if _, isCall := m["method"]; !isCall {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

const (
	drainInit        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	drainInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// TestStdioAnswersBeforeInputEnds: a client that writes its requests and closes its end at once,
// as `nodmix mcp serve < requests.jsonl` does, gets every answer before the session ends, over an
// input read on a goroutine of the connection's and over an OS pipe that Read reads itself.
func TestStdioAnswersBeforeInputEnds(t *testing.T) {
	input := strings.Join([]string{drainInit, drainInitialized,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
	}, "\n") + "\n"
	for _, osPipe := range []bool{false, true} {
		t.Run(map[bool]string{false: "reader", true: "os.Pipe"}[osPipe], func(t *testing.T) {
			leaktest.Check(t)
			srv := New(newFakeSessions(), Options{SessionID: "drain"})
			defer srv.Close()
			var in *os.File
			if osPipe {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if _, err := w.WriteString(input); err != nil {
					t.Fatal(err)
				}
				_ = w.Close()
				in = r
			}
			var out syncBuffer
			var err error
			if in != nil {
				err = srv.ServeStdio(t.Context(), in, &out)
			} else {
				err = srv.ServeStdio(t.Context(), strings.NewReader(input), &out)
			}
			if err != nil {
				t.Fatalf("ServeStdio = %v", err)
			}
			// Calls are answered as they finish, in any order.
			ids := answerIDs(t, out.String())
			slices.Sort(ids)
			if diff := cmp.Diff([]float64{1, 2, 3}, ids); diff != "" {
				t.Errorf("answered ids (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStdioInputEndWaitsBounded: a call that would never end does not hold the session past the
// drain time once the input has ended; the answers already due are out.
func TestStdioInputEndWaitsBounded(t *testing.T) {
	leaktest.Check(t)
	srv := New(newFakeSessions(), Options{SessionID: "slow"})
	defer srv.Close()
	input := strings.Join([]string{drainInit, drainInitialized,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
	}, "\n") + "\n"
	var out syncBuffer
	tr := NewLineTransport(strings.NewReader(input), &out, 1<<20).(*lineTransport)
	tr.drain = 50 * time.Millisecond
	served := make(chan error, 1)
	go func() { served <- srv.Serve(t.Context(), tr) }()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the session outlived its input by far more than the drain time")
	}
	if ids := answerIDs(t, out.String()); len(ids) == 0 || ids[0] != 1 {
		t.Errorf("answered ids %v, want the initialize answer first", ids)
	}
}
