package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMaxRunning: runs beyond Options.MaxRunning wait for one to end, up to their timeout, and
// then fail with a message the model can act on; a slot frees once its child is gone.
func TestMaxRunning(t *testing.T) {
	before := runtime.NumGoroutine()
	p, err := NewPool(Options{Command: []string{os.Args[0], ChildArg}, Warm: -1, MaxRunning: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		checkGoroutines(t, before)
	}()
	started, finish := make(chan struct{}), make(chan struct{})
	blocking := &fakeBridge{onCall: func(ctx context.Context, _ string, args json.RawMessage) (json.RawMessage, error) {
		close(started)
		select {
		case <-finish:
			return args, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	first := make(chan error, 1)
	go func() {
		_, err := p.Run(context.Background(), `return await nodmix.tools.call("x", 1);`, blocking, Limits{Timeout: time.Minute})
		first <- err
	}()
	<-started

	lim := testLimits()
	lim.Timeout = 200 * time.Millisecond
	_, err = p.Run(context.Background(), `return 2;`, &fakeBridge{}, lim)
	ce := codeError(t, err)
	if want := fmt.Sprintf(msgBusy, 1); ce.Kind != KindTimeout || ce.Message != want {
		t.Errorf("a run past the cap = %+v, want timeout %q", ce, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.Run(ctx, `return 2;`, &fakeBridge{}, Limits{Timeout: time.Minute})
	if ce := codeError(t, err); ce.Kind != KindAborted || !errors.Is(err, context.Canceled) {
		t.Errorf("a waiting run whose ctx ends = %+v, want aborted", ce)
	}

	// A run that waits gets the slot when the first ends.
	waited := make(chan error, 1)
	go func() {
		res, err := p.Run(context.Background(), `return 3;`, &fakeBridge{}, Limits{Timeout: time.Minute})
		if err == nil && string(res.Value) != "3" {
			err = fmt.Errorf("value %s", res.Value)
		}
		waited <- err
	}()
	select {
	case err := <-waited:
		t.Fatalf("the waiting run ended while the first held the only slot: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(finish)
	if err := <-first; err != nil {
		t.Fatalf("first run: %v", err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("waiting run: %v", err)
	}
}
