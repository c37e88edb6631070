package mcpserve

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodmix/nodmix/internal/catalog"
)

// startingSessions opens sessions whose first tools/list finds a tool that arrives while it waits
// (a server connecting), and that mark that tool with _meta.
type startingSessions struct{ waits atomic.Int32 }

func (f *startingSessions) Open(_ context.Context, id string) (Session, error) {
	return &startingSession{fakeSession: &fakeSession{id: id, subs: map[int]func(){}, tools: baseTools()}, waits: &f.waits}, nil
}

type startingSession struct {
	*fakeSession
	waits *atomic.Int32
}

var (
	_ ToolWaiter    = (*startingSession)(nil)
	_ ToolAnnotator = (*startingSession)(nil)
)

func (s *startingSession) WaitTools(context.Context) {
	if s.waits.Add(1) == 1 {
		s.activate("late")
	}
}

func (s *startingSession) ToolMeta(t *catalog.Tool) map[string]any {
	if t.Name == "late" {
		return map[string]any{"nodmix/connected": false}
	}
	return nil
}

func TestToolsListWaitsAndAnnotates(t *testing.T) {
	f := &startingSessions{}
	srv := New(f, Options{})
	defer srv.Close()
	cs, _ := connectInMemory(t, srv)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	metas := map[string]map[string]any{}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Meta != nil {
			metas[tool.Name] = tool.Meta
		}
	}
	if !slices.Contains(names, "late") {
		t.Errorf("the first tools/list misses the tool that arrived while it waited: %v", names)
	}
	if diff := cmp.Diff(map[string]map[string]any{"late": {"nodmix/connected": false}}, metas); diff != "" {
		t.Errorf("_meta of listed tools (-want +got):\n%s", diff)
	}
	if n := f.waits.Load(); n != 1 {
		t.Errorf("WaitTools ran %d times, want 1", n)
	}
}
