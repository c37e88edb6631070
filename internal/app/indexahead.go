package app

import (
	"context"
	"sync"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/exposure"
)

// startIndexAhead builds the search index of the current catalog, and of every snapshot after it,
// on a goroutine of its own: the index of the mode the engine serves (Tool Search's, or
// discovery's corpus). A long-running face calls it, so that a model's first search after
// start-up, or after a server reconnects with changed tools, finds its index built instead of
// waiting for the build. Snapshots that arrive while a build runs are coalesced: the next build
// takes the newest. The goroutine ends, and Close waits for it, when the app closes.
func (a *App) startIndexAhead() {
	wake := make(chan struct{}, 1)
	wake <- struct{}{} // the catalog as it is now
	stopWatch := a.Catalog.Watch(func(_ *catalog.Snapshot) {
		select {
		case wake <- struct{}{}:
		default: // a build is already due; it takes the newest snapshot
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-wake:
			}
			a.prepareIndex()
		}
	})
	a.addCloser(func() error {
		stopWatch()
		cancel()
		wg.Wait()
		return nil
	})
}

// prepareIndex builds the index the current mode searches, for the current allowed catalog.
// A failure is only logged: the first search builds the index itself and reports its error.
func (a *App) prepareIndex() {
	var err error
	switch a.Engine.Mode() {
	case exposure.ToolSearchTools, exposure.ToolSearchCode:
		_, err = a.toolSearch.indexes.Index(a.Engine.Allowed())
	case exposure.Discovery:
		err = a.Discovery.Prepare(a.Engine.Allowed())
	}
	if err != nil {
		a.Log.Warn("index ahead of the first search", "err", err)
	}
}
