package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
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

// TestCompromisedChild: whatever a child that no longer follows the protocol writes, the
// parent ends the run with a failure (a result over the run's bounds is the limit it breaks)
// and does not wait for the child.
func TestCompromisedChild(t *testing.T) {
	lim := testLimits()
	lim.MaxResultBytes = 2 << 10
	tests := []struct {
		name    string
		out     string
		wantErr string // the message, exact
		code    bool   // a *CodeError, not an infrastructure error
	}{
		{name: "result nested too deep", out: `{"type":"result","ok":true,"value":` + strings.Repeat("[", MaxValueDepth+1) + strings.Repeat("]", MaxValueDepth+1) + `}` + "\n",
			wantErr: resultDepthMessage(), code: true},
		{name: "a line without end", out: strings.Repeat("y", 8<<20),
			wantErr: resultSizeMessage(lim.MaxResultBytes), code: true},
		{name: "garbage", out: "\x00\xff{{{\n", wantErr: "sandbox: read from child: decode protocol message: invalid character '\\x00' looking for beginning of value"},
		{name: "a second hello", out: helloLine, wantErr: `sandbox: unexpected "hello" message from child`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			script := t.TempDir() + "/out"
			if err := os.WriteFile(script, []byte(tc.out), 0o600); err != nil {
				t.Fatal(err)
			}
			p := newTestPool(t, -1, "script", script)
			start := time.Now()
			_, err := p.Run(context.Background(), `return 1;`, &fakeBridge{}, lim)
			if elapsed := time.Since(start); elapsed > lim.Timeout+slack {
				t.Errorf("Run took %v, deadline %v", elapsed, lim.Timeout)
			}
			var ce *CodeError
			isCode := errors.As(err, &ce)
			if err == nil || err.Error() != tc.wantErr || isCode != tc.code {
				t.Errorf("error = %v (code error %v), want %q (code error %v)", err, isCode, tc.wantErr, tc.code)
			}
		})
	}
}
