package provider

import (
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/config"
)

// TestIdleTimeoutDefault: a registry built without an idle bound (as the app builds it) has the
// default one on every provider; a negative bound sets none.
func TestIdleTimeoutDefault(t *testing.T) {
	for _, c := range []struct {
		opt, want time.Duration
	}{
		{0, DefaultIdleTimeout},
		{time.Second, time.Second},
		{-1, -1},
	} {
		r, err := New(&config.Config{}, Options{IdleTimeout: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range r.IDs() {
			if p, _ := r.Get(id); p.idle != c.want {
				t.Errorf("IdleTimeout %v: provider %s has %v, want %v", c.opt, id, p.idle, c.want)
			}
		}
	}
}
