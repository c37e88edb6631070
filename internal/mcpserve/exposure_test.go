package mcpserve

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/dispatch"
	"github.com/nodmix/nodmix/internal/exposure"
	"github.com/nodmix/nodmix/internal/leaktest"
	"github.com/nodmix/nodmix/internal/session"
)

// flakyStore is a store whose reads of discovery selections fail while fail is set, as SQLite's
// do when the database is locked or closing.
type flakyStore struct {
	*session.Memory
	fail atomic.Bool
}

func (s *flakyStore) Selected(ctx context.Context, sess string) ([]string, error) {
	if s.fail.Load() {
		return nil, errors.New("database is locked")
	}
	return s.Memory.Selected(ctx, sess)
}

// The exposure view says when its listing failed.
var _ ToolLister = (*exposure.View)(nil)

type engineSessions struct{ e *exposure.Engine }

func (s engineSessions) Open(ctx context.Context, id string) (Session, error) {
	return s.e.Open(ctx, id)
}

// TestFailedListingKeepsTheClientsList: when the session's tools cannot be listed for a while
// (the store cannot be read), the client keeps the list it has instead of being told that every
// tool is gone, and the next list after the failure lists them again.
func TestFailedListingKeepsTheClientsList(t *testing.T) {
	leaktest.Check(t)
	echo := catalog.ExecutorFunc(func(_ context.Context, c catalog.Call) (*catalog.Result, error) {
		return catalog.TextResult(c.Tool.ID), nil
	})
	cat := catalog.New(nil)
	cat.Add(catalog.Static([]catalog.Entry{
		{Tool: catalog.Tool{ID: "nodmix:core:read", Name: "read", Source: catalog.SourceBuiltin}, Exec: echo},
		{Tool: catalog.Tool{ID: "mcp:srv:hidden", Name: "mcp__srv__hidden", Source: catalog.SourceMCP, Server: "srv"}, Exec: echo},
	}))
	store := &flakyStore{Memory: session.NewMemory()}
	e := &exposure.Engine{Catalog: cat, Pipeline: &dispatch.Pipeline{}}
	e.Discovery = discovery.NewService(discovery.NewRules(discovery.MCPOnly, nil, nil, cat.Snapshot()), store, e.Notify)
	e.SetMode(exposure.Discovery)
	srv := New(engineSessions{e}, Options{})
	t.Cleanup(func() { _ = srv.Close() })
	cs, _ := connectInMemory(t, srv)

	want := []string{"read", discovery.ToolName}
	if diff := cmp.Diff(want, toolNames(t, cs)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	store.fail.Store(true)
	e.Notify("") // a change the session's list must be brought up to date with
	if diff := cmp.Diff(want, toolNames(t, cs)); diff != "" {
		t.Errorf("tools while the store fails (-want +got):\n%s", diff)
	}
	store.fail.Store(false)
	if diff := cmp.Diff(want, toolNames(t, cs)); diff != "" {
		t.Errorf("tools after the failure (-want +got):\n%s", diff)
	}
}
