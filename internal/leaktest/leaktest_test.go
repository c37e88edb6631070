package leaktest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/leaktest"
)

// recorder is a testing.TB that keeps cleanups and errors for the test to inspect.
type recorder struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) finish() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestCheck(t *testing.T) {
	stop := make(chan struct{})
	rec := &recorder{TB: t}
	leaktest.CheckWithin(rec, 50*time.Millisecond)
	go func() { <-stop }() // this package's own goroutine: nodmix/internal is in its stack
	rec.finish()
	if len(rec.errs) != 1 {
		t.Errorf("a leaked goroutine gave %d errors, want 1", len(rec.errs))
	}
	close(stop)

	done := make(chan struct{})
	rec = &recorder{TB: t}
	leaktest.CheckWithin(rec, 5*time.Second)
	go func() { close(done) }()
	<-done
	rec.finish()
	if len(rec.errs) != 0 {
		t.Errorf("a goroutine that ended was reported: %v", rec.errs)
	}
}
