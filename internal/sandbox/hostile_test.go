package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestChildStopsReading: a child that stops reading its stdin in the middle of a large bridge
// result and then sends its result must not hold Run (and so the pool's Close) until it exits.
func TestChildStopsReading(t *testing.T) {
	p := newTestPool(t, -1, "deaf")
	big := json.RawMessage(`"` + strings.Repeat("x", 4<<20) + `"`)
	b := &fakeBridge{onCall: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return big, nil
	}}
	lim := testLimits()
	start := time.Now()
	res, err := p.Run(context.Background(), `return 1;`, b, lim)
	if elapsed := time.Since(start); elapsed > lim.Timeout+slack {
		t.Errorf("Run took %v, deadline %v", elapsed, lim.Timeout)
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if string(res.Value) != `"done"` || res.BridgeCalls != 1 {
		t.Errorf("result = %s after %d bridge calls, want \"done\" after 1", res.Value, res.BridgeCalls)
	}
}
