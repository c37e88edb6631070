package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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
	entries []*Entry // sorted by id (byte order), each id once: ByID searches them
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
	if e.First == e.Second {
		// Two tools with one id (a plugin listed twice, a client declaring a tool twice): the
		// name form would name that id three times and call it a name.
		return fmt.Sprintf("tool id %q is used by two tools", e.First)
	}
	return fmt.Sprintf("tool name %q is used by both %s and %s", e.Name, e.First, e.Second)
}

// NewSnapshot builds a snapshot. Entries are copied; their order does not matter. Duplicate ids or
// model-facing names are an error naming both tools, never resolved by arrival order.
func NewSnapshot(version uint64, entries []Entry) (*Snapshot, error) {
	// The ids are sorted as a compact slice, then the entries copied in that order into one array:
	// no allocation per entry, and tools next to each other in id order are next to each other in
	// memory. Ids are then found by binary search, with no map to build. (The sort is the same pattern-defeating quicksort, with the same comparisons, as
	// sort.Slice on the entries: tools with equal ids keep the order they had.)
	type key struct {
		id string
		i  int
	}
	keys := make([]key, len(entries))
	for i := range entries {
		keys[i] = key{entries[i].Tool.ID, i}
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.id, b.id) })
	s := &Snapshot{
		entries: make([]*Entry, len(entries)),
		byName:  make(map[string]*Entry, len(entries)),
		version: version,
	}
	copies := make([]Entry, len(entries))
	for k, key := range keys {
		copies[k] = entries[key.i]
		s.entries[k] = &copies[k]
	}
	var errs []error
	var lastID string
	haveLast := false
	for _, e := range s.entries {
		t := &e.Tool
		if t.ID == "" || t.Name == "" {
			errs = append(errs, fmt.Errorf("tool %q: id and name are required", t.ID+t.Name))
			continue
		}
		// Equal ids are next to each other: the first with a name is the one kept.
		if haveLast && lastID == t.ID {
			errs = append(errs, &CollisionError{Name: t.ID, First: lastID, Second: t.ID})
			continue
		}
		lastID, haveLast = t.ID, true
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
	i, ok := slices.BinarySearchFunc(s.entries, id, func(e *Entry, id string) int { return strings.Compare(e.Tool.ID, id) })
	if !ok {
		return nil, false
	}
	return s.entries[i], true
}

// ByName finds an entry by its model-facing name.
func (s *Snapshot) ByName(name string) (*Entry, bool) {
	e, ok := s.byName[name]
	return e, ok
}

// Lookup finds an entry by exact id, else by model-facing name.
func (s *Snapshot) Lookup(idOrName string) (*Entry, bool) {
	if e, ok := s.ByID(idOrName); ok {
		return e, true
	}
	return s.ByName(idOrName)
}

// Filter returns a snapshot of the entries for which keep returns true, sharing the entries. When
// keep takes every entry, as a policy that allows everything does, the result shares the name map
// too instead of building it again: it is never written after NewSnapshot.
func (s *Snapshot) Filter(keep func(*Tool) bool) *Snapshot {
	var kept []*Entry
	all := true
	for i, e := range s.entries {
		switch {
		case keep(&e.Tool):
			if !all {
				kept = append(kept, e)
			}
		case all:
			all = false
			kept = append(kept, s.entries[:i]...)
		}
	}
	out := &Snapshot{version: s.version}
	if all {
		if len(s.entries) > 0 {
			out.entries = s.entries
		}
		out.byName = s.byName
		return out
	}
	out.entries = kept
	out.byName = make(map[string]*Entry, len(kept))
	for _, e := range kept {
		out.byName[e.Tool.Name] = e
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
