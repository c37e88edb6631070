package toolsearch

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nodmix/nodmix/internal/benchtest"
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/search"
)

// heldRanker is a ranker factory whose builds each wait for a release, so that a test can ask
// for an index while its build is in flight. With fail set, a released build panics.
type heldRanker struct {
	builds  atomic.Int32
	entered chan struct{}
	release chan struct{}
	fail    atomic.Bool
}

func newHeldRanker() *heldRanker {
	return &heldRanker{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (h *heldRanker) factory(tools []*catalog.Tool) Ranker {
	h.builds.Add(1)
	h.entered <- struct{}{}
	<-h.release
	if h.fail.Load() {
		panic("ranker build failed")
	}
	return newWordRanker(tools)
}

// awaitWaiters returns once n callers wait for the build of snap in c.
func awaitWaiters(t *testing.T, c *IndexCache, snap *catalog.Snapshot, n int) {
	t.Helper()
	key := indexKey(snap.Version(), served(snap, c.policy))
	deadline := time.Now().Add(time.Minute)
	for {
		c.mu.Lock()
		p := c.building[key]
		got := 0
		if p != nil {
			got = p.waiters
		}
		c.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers wait for the build, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestIndexCacheOneBuild: callers that ask for a snapshot while its index is being built wait for
// that build and share its index; none builds its own.
func TestIndexCacheOneBuild(t *testing.T) {
	h := newHeldRanker()
	c := NewIndexCache(nil, h.factory)
	snap, _ := catalog.NewSnapshot(1, goldenEntries())
	const callers = 8
	got := make([]*Index, callers)
	var wg sync.WaitGroup
	wg.Go(func() { got[0], _ = c.Index(snap) })
	<-h.entered
	for i := 1; i < callers; i++ {
		// An equal snapshot, not the same one: callers on other goroutines hold their own.
		other := snap.Filter(func(*catalog.Tool) bool { return true })
		wg.Go(func() { got[i], _ = c.Index(other) })
	}
	awaitWaiters(t, c, snap, callers-1)
	close(h.release)
	wg.Wait()
	if n := h.builds.Load(); n != 1 {
		t.Errorf("%d builds for one snapshot, want 1", n)
	}
	for i, ix := range got {
		if ix == nil || ix != got[0] {
			t.Fatalf("caller %d got index %p, the builder %p", i, ix, got[0])
		}
	}
	if len(c.building) != 0 {
		t.Errorf("%d builds left in flight", len(c.building))
	}
}

// TestIndexCacheBuildPanics: a build that panics releases its waiters with an error instead of
// leaving them waiting, and the next caller builds again.
func TestIndexCacheBuildPanics(t *testing.T) {
	h := newHeldRanker()
	h.fail.Store(true)
	c := NewIndexCache(nil, h.factory)
	snap, _ := catalog.NewSnapshot(1, goldenEntries())
	var panicked any
	var waitErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer func() { panicked = recover() }()
		_, _ = c.Index(snap)
	})
	<-h.entered
	wg.Go(func() { _, waitErr = c.Index(snap) })
	awaitWaiters(t, c, snap, 1)
	close(h.release)
	wg.Wait()
	if panicked == nil {
		t.Error("the builder's panic was swallowed")
	}
	if !errors.Is(waitErr, errIndexBuild) {
		t.Errorf("the waiter got %v, want %v", waitErr, errIndexBuild)
	}
	h.fail.Store(false)
	ix, err := c.Index(snap)
	if err != nil || ix == nil {
		t.Fatalf("the build after a panic: %v", err)
	}
	if n := h.builds.Load(); n != 2 {
		t.Errorf("%d builds, want 2: the failed one and its retry", n)
	}
}

// BenchmarkIndexFirstUse10000 is eight sessions opening at once on a new 10,000-tool catalog
// version, each asking for its index: what the first searches after a catalog change cost.
func BenchmarkIndexFirstUse10000(b *testing.B) {
	entries, _ := benchCatalog(b, 10000)
	snap, err := catalog.NewSnapshot(1, entries)
	if err != nil {
		b.Fatal(err)
	}
	rank := SearchRanker(search.RankerOptions{})
	benchtest.LoopCPU(b, func() {
		c := NewIndexCache(nil, rank)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := c.Index(snap); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	})
}

// TestIndexCacheCached: Cached and Holds tell a kept index from one never built or let go of,
// and build nothing.
func TestIndexCacheCached(t *testing.T) {
	h := newHeldRanker()
	close(h.release)
	c := NewIndexCache(nil, h.factory)
	snap, _ := catalog.NewSnapshot(1, goldenEntries())
	if c.Cached(snap) {
		t.Error("an index that was never built is cached")
	}
	first, err := c.Index(snap)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Holds(first) {
		t.Error("the cache does not hold the index it just built")
	}
	if !c.Cached(snap) || !c.Cached(snap.Filter(func(*catalog.Tool) bool { return true })) {
		t.Error("the built index is not cached, for the snapshot or an equal one")
	}
	if next, _ := catalog.NewSnapshot(2, goldenEntries()); c.Cached(next) {
		t.Error("a new catalog version is cached")
	}
	if n := h.builds.Load(); n != 1 {
		t.Errorf("%d builds, want 1", n)
	}
	for v := range uint64(indexCacheSize) {
		next, _ := catalog.NewSnapshot(v+2, goldenEntries())
		if _, err := c.Index(next); err != nil {
			t.Fatal(err)
		}
	}
	if c.Holds(first) || c.Cached(snap) {
		t.Errorf("the cache still holds the first index after %d newer ones", indexCacheSize)
	}
}
