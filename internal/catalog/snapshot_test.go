package catalog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sortSliceSnapshot is NewSnapshot as it was written with sort.Slice and an allocation per entry:
// the reference for the ids, names, order and errors of NewSnapshot.
func sortSliceSnapshot(entries []Entry) ([]string, error) {
	ptrs := make([]*Entry, len(entries))
	for i := range entries {
		e := entries[i]
		ptrs[i] = &e
	}
	sort.Slice(ptrs, func(i, j int) bool { return ptrs[i].Tool.ID < ptrs[j].Tool.ID })
	byID, byName := map[string]*Entry{}, map[string]*Entry{}
	var errs []error
	var order []string
	for _, e := range ptrs {
		t := &e.Tool
		order = append(order, t.ID+" "+t.Name)
		if t.ID == "" || t.Name == "" {
			errs = append(errs, fmt.Errorf("tool %q: id and name are required", t.ID+t.Name))
			continue
		}
		if prev, ok := byID[t.ID]; ok {
			errs = append(errs, &CollisionError{Name: t.ID, First: prev.Tool.ID, Second: t.ID})
			continue
		}
		byID[t.ID] = e
		if prev, ok := byName[t.Name]; ok {
			errs = append(errs, &CollisionError{Name: t.Name, First: prev.Tool.ID, Second: t.ID})
			continue
		}
		byName[t.Name] = e
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return order, nil
}

// TestNewSnapshotAsSortSlice: with duplicate and missing ids and names in any order, NewSnapshot
// orders the tools and reports exactly what the sort.Slice version did.
func TestNewSnapshotAsSortSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 400 {
		n := r.IntN(60)
		if trial%20 == 0 {
			n = 500 + r.IntN(3000)
		}
		ids, names := 1+r.IntN(n+1), 1+r.IntN(n+1)
		if trial%2 == 0 {
			ids, names = n+1, n+1 // mostly unique: snapshots that build
		}
		entries := make([]Entry, n)
		for i := range entries {
			entries[i].Tool.ID = fmt.Sprint("t", r.IntN(ids))
			entries[i].Tool.Name = fmt.Sprint("n", r.IntN(names))
			entries[i].Tool.Description = fmt.Sprint(i)
			if r.IntN(50) == 0 {
				entries[i].Tool.ID = ""
			}
			if r.IntN(50) == 0 {
				entries[i].Tool.Name = ""
			}
		}
		want, wantErr := sortSliceSnapshot(entries)
		s, err := NewSnapshot(1, entries)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("trial %d: err = %v, want %v", trial, err, wantErr)
		}
		if err != nil {
			continue
		}
		var got []string
		for _, e := range s.Entries() {
			got = append(got, e.Tool.ID+" "+e.Tool.Name)
			if f, ok := s.ByID(e.Tool.ID); !ok || f != e {
				t.Fatalf("ByID(%q) = %v", e.Tool.ID, f)
			}
			if f, ok := s.ByName(e.Tool.Name); !ok || f != e {
				t.Fatalf("ByName(%q) = %v", e.Tool.Name, f)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("trial %d (-sort.Slice +NewSnapshot):\n%s", trial, diff)
		}
		for _, id := range []string{"", "t", "t-1", "u", fmt.Sprint("t", ids)} {
			if e, ok := s.ByID(id); ok || e != nil {
				t.Fatalf("ByID(%q) found %v", id, e)
			}
		}
	}
}

// TestFilter: a filter that keeps everything and one that keeps some give the same lookups as a
// snapshot built of what they keep.
func TestFilter(t *testing.T) {
	var entries []Entry
	for i := range 50 {
		entries = append(entries, Entry{Tool: Tool{ID: fmt.Sprint("id", i), Name: fmt.Sprint("name", i)}})
	}
	s, err := NewSnapshot(7, entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []func(*Tool) bool{
		func(*Tool) bool { return true },
		func(*Tool) bool { return false },
		func(t *Tool) bool { return t.ID != "id0" },
		func(t *Tool) bool { return len(t.ID)%2 == 0 },
	} {
		f := s.Filter(keep)
		var want []string
		for _, e := range s.Entries() {
			if keep(&e.Tool) {
				want = append(want, e.Tool.ID)
			}
		}
		var got []string
		for _, e := range f.Entries() {
			got = append(got, e.Tool.ID)
		}
		if diff := cmp.Diff(want, got); diff != "" || f.Version() != 7 || f.Len() != len(want) {
			t.Fatalf("Filter (-want +got):\n%s", diff)
		}
		for _, e := range s.Entries() {
			_, byID := f.ByID(e.Tool.ID)
			_, byName := f.Lookup(e.Tool.Name)
			if byID != keep(&e.Tool) || byName != keep(&e.Tool) {
				t.Fatalf("%s: found by id %v, by name %v", e.Tool.ID, byID, byName)
			}
		}
	}
	if f := s.Filter(func(*Tool) bool { return false }); f.Entries() != nil {
		t.Error("a filter that keeps nothing has entries")
	}
}
