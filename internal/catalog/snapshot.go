package catalog

import (
	"errors"
	"fmt"
	"sort"
)

// Entry is a tool and the executor that runs it.
type Entry struct {
	Tool Tool
	Exec Executor
}

// Snapshot is a consistent, immutable view of the catalog: every tool a run can see. A change to
// any source makes a new Snapshot; calls in flight finish on the snapshot they started with.
// A Snapshot is safe for concurrent use.
type Snapshot struct {
	entries []*Entry // sorted by id (byte order)
	byID    map[string]*Entry
	byName  map[string]*Entry
	version uint64
}

// CollisionError reports two tools that would reach a model under one name or id.
type CollisionError struct {
	Name   string
	First  string // id of the first tool
	Second string // id of the second tool
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("tool name %q is used by both %s and %s", e.Name, e.First, e.Second)
}

// NewSnapshot builds a snapshot. Entries are copied; their order does not matter. Duplicate ids or
// model-facing names are an error naming both tools, never resolved by arrival order.
func NewSnapshot(version uint64, entries []Entry) (*Snapshot, error) {
	s := &Snapshot{
		entries: make([]*Entry, len(entries)),
		byID:    make(map[string]*Entry, len(entries)),
		byName:  make(map[string]*Entry, len(entries)),
		version: version,
	}
	for i := range entries {
		e := entries[i]
		s.entries[i] = &e
	}
	sort.Slice(s.entries, func(i, j int) bool { return s.entries[i].Tool.ID < s.entries[j].Tool.ID })
	var errs []error
	for _, e := range s.entries {
		t := &e.Tool
		if t.ID == "" || t.Name == "" {
			errs = append(errs, fmt.Errorf("tool %q: id and name are required", t.ID+t.Name))
			continue
		}
		if prev, ok := s.byID[t.ID]; ok {
			errs = append(errs, &CollisionError{Name: t.ID, First: prev.Tool.ID, Second: t.ID})
			continue
		}
		s.byID[t.ID] = e
		if prev, ok := s.byName[t.Name]; ok {
			errs = append(errs, &CollisionError{Name: t.Name, First: prev.Tool.ID, Second: t.ID})
			continue
		}
		s.byName[t.Name] = e
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// Version increases with every rebuild of the live catalog.
func (s *Snapshot) Version() uint64 { return s.version }

// Len is the number of tools.
func (s *Snapshot) Len() int { return len(s.entries) }

// Entries returns the entries sorted by id. The slice must not be modified.
func (s *Snapshot) Entries() []*Entry { return s.entries }

// ByID finds an entry by its exact id.
func (s *Snapshot) ByID(id string) (*Entry, bool) {
	e, ok := s.byID[id]
	return e, ok
}

// ByName finds an entry by its model-facing name.
func (s *Snapshot) ByName(name string) (*Entry, bool) {
	e, ok := s.byName[name]
	return e, ok
}

// Lookup finds an entry by exact id, else by model-facing name.
func (s *Snapshot) Lookup(idOrName string) (*Entry, bool) {
	if e, ok := s.byID[idOrName]; ok {
		return e, true
	}
	return s.ByName(idOrName)
}

// Filter returns a snapshot of the entries for which keep returns true, sharing the entries.
func (s *Snapshot) Filter(keep func(*Tool) bool) *Snapshot {
	out := &Snapshot{byID: make(map[string]*Entry), byName: make(map[string]*Entry), version: s.version}
	for _, e := range s.entries {
		if keep(&e.Tool) {
			out.entries = append(out.entries, e)
			out.byID[e.Tool.ID] = e
			out.byName[e.Tool.Name] = e
		}
	}
	return out
}

// With returns a new snapshot with extra entries (client tools supplied for one run) added.
func (s *Snapshot) With(extra []Entry) (*Snapshot, error) {
	all := make([]Entry, 0, len(s.entries)+len(extra))
	for _, e := range s.entries {
		all = append(all, *e)
	}
	all = append(all, extra...)
	return NewSnapshot(s.version, all)
}
