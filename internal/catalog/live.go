package catalog

import (
	"fmt"
	"log/slog"
	"sync"
)

// Provider is a source of tools: the built-ins, one plugin, the MCP hub, ... Tools must be safe for
// concurrent use and return the provider's current entries; a provider whose tool list changes
// calls the notify function it was given by Catalog.Add so that a new snapshot is built.
type Provider interface {
	Tools() []Entry
}

// Catalog is the live catalog: it merges its providers into snapshots and rebuilds when one of them
// changes. It is safe for concurrent use.
type Catalog struct {
	log *slog.Logger

	mu        sync.Mutex
	providers []Provider
	current   *Snapshot
	version   uint64
	lastErr   error
	watchers  map[int]func(*Snapshot)
	nextWatch int

	// notifyMu orders the calls of watchers: held while they run, after mu is released (a
	// watcher may read the catalog). delivered is the version they last saw.
	notifyMu  sync.Mutex
	delivered uint64
}

// New returns an empty catalog.
func New(log *slog.Logger) *Catalog {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Catalog{log: log, watchers: map[int]func(*Snapshot){}}
	c.current, _ = NewSnapshot(0, nil)
	return c
}

// Add registers a provider and rebuilds. It returns the function the provider calls when its tools
// change.
func (c *Catalog) Add(p Provider) (notify func()) {
	c.mu.Lock()
	c.providers = append(c.providers, p)
	c.mu.Unlock()
	c.Rebuild()
	return c.Rebuild
}

// Rebuild builds a new snapshot from the providers. If the tools collide, the previous snapshot stays
// current and the error is kept for Err: a bad server must not take every other tool away.
func (c *Catalog) Rebuild() {
	c.mu.Lock()
	var all []Entry
	if len(c.providers) == 1 {
		all = c.providers[0].Tools() // NewSnapshot copies it
	} else {
		lists := make([][]Entry, len(c.providers))
		n := 0
		for i, p := range c.providers {
			lists[i] = p.Tools()
			n += len(lists[i])
		}
		all = make([]Entry, 0, n)
		for _, l := range lists {
			all = append(all, l...)
		}
	}
	snap, err := NewSnapshot(c.version+1, all)
	if err != nil {
		c.lastErr = fmt.Errorf("catalog: %w", err)
		c.mu.Unlock()
		c.log.Warn("catalog rebuild refused", "err", err)
		return
	}
	c.version++
	c.current = snap
	c.lastErr = nil
	c.mu.Unlock()
	c.notify()
}

// notify calls the watchers with the current snapshot unless they have seen it. Rebuilds on two
// goroutines would otherwise race to call them, and a watcher could get an older snapshot after
// a newer one and keep it; this way each sees versions in order, the last one always.
func (c *Catalog) notify() {
	c.notifyMu.Lock()
	defer c.notifyMu.Unlock()
	c.mu.Lock()
	snap := c.current
	watchers := make([]func(*Snapshot), 0, len(c.watchers))
	for _, w := range c.watchers {
		watchers = append(watchers, w)
	}
	c.mu.Unlock()
	if snap.Version() <= c.delivered {
		return
	}
	c.delivered = snap.Version()
	for _, w := range watchers {
		w(snap)
	}
}

// Snapshot returns the current snapshot.
func (c *Catalog) Snapshot() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current
}

// Err returns the error of the last refused rebuild, or nil.
func (c *Catalog) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// Watch calls fn with new snapshots until the returned cancel function is called: in order of
// version, one call at a time, the newest always (an older one may be skipped when rebuilds
// overlap). fn runs on a goroutine that rebuilt the catalog and must not block or rebuild it.
func (c *Catalog) Watch(fn func(*Snapshot)) (cancel func()) {
	c.mu.Lock()
	id := c.nextWatch
	c.nextWatch++
	c.watchers[id] = fn
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.watchers, id)
		c.mu.Unlock()
	}
}

// Static is a Provider with a fixed list of entries.
type Static []Entry

// Tools returns the entries.
func (s Static) Tools() []Entry { return s }

var _ Provider = Static(nil)
