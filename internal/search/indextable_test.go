package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestRefTable: references come back in the order they were added, through the table's
// growth, and only under their own hash.
func TestRefTable(t *testing.T) {
	tab := NewRefTable(1)
	keys := []string{"alpha", "beta", "gamma", "alpha", "delta", "beta", "alpha"}
	want := map[string][]uint32{}
	for round := range 200 { // many growths, and runs of probes that wrap round the table
		for i, k := range keys {
			key := fmt.Sprintf("%s%d", k, round%7)
			ref := uint32(round*len(keys) + i)
			tab.Add(tab.Hash(key), ref)
			want[key] = append(want[key], ref)
		}
	}
	for key, refs := range want {
		var got []uint32
		for ref := range tab.Refs(tab.Hash(key)) {
			if k := keys[ref%uint32(len(keys))]; strings.HasPrefix(key, k) && strings.TrimPrefix(key, k) == fmt.Sprint(ref/uint32(len(keys))%7) {
				got = append(got, ref)
			}
		}
		if !slices.Equal(got, refs) {
			t.Fatalf("%s: got %v, want %v", key, got, refs)
		}
	}
	var empty RefTable
	for range empty.Refs(0) {
		t.Fatal("an empty table yields a reference")
	}
}

// TestHashLowerAndEqualLower: HashLower and EqualLower agree with strings.ToLower.
func TestHashLowerAndEqualLower(t *testing.T) {
	tab := NewRefTable(0)
	for _, s := range []string{"", "abc", "GitHub_Create", strings.Repeat("AbC", 50), "ÉCOLE", "straße", "İstanbul", "K"} {
		lower := strings.ToLower(s)
		if tab.HashLower(s) != tab.Hash(lower) {
			t.Errorf("HashLower(%q) is not the hash of %q", s, lower)
		}
		if !EqualLower(s, lower) {
			t.Errorf("EqualLower(%q, %q) is false", s, lower)
		}
		if EqualLower(s, lower+"x") || (lower != "" && EqualLower(s, strings.ToUpper(lower)) != (strings.ToUpper(lower) == lower)) {
			t.Errorf("EqualLower(%q) accepts another string", s)
		}
	}
}

// TestExactIndex: the exact-request tables find what maps of lowercased keys find, for the
// keys of every document and for names with capitals, tails and non-ASCII letters.
func TestExactIndex(t *testing.T) {
	docs := rankDocs(readTools(t, sealtoolsTools), true)
	for i, n := range []string{"GitHub__Create_Issue", "github__create_issue", "ÉCOLE__Straße", "école", "x__", "__Tail", "Dup", "DUP", "Tail"} {
		docs = append(docs, RankDoc{ID: fmt.Sprintf("extra/%d", i), Name: n})
	}
	docs = append(docs, RankDoc{ID: "Dup", Name: "dup"}, RankDoc{ID: "same", Name: "same"})
	for _, tails := range []bool{false, true} {
		x := newExactIndex(docs, tails)
		byID, byLower := map[string][]int32{}, map[string][]int32{}
		for i, d := range docs {
			byID[d.ID] = append(byID[d.ID], int32(i))
			keys := [3]string{jsLower(d.Name), jsLower(d.ID)}
			if k := strings.LastIndex(keys[0], "__"); tails && k >= 0 && k+2 < len(keys[0]) {
				keys[2] = keys[0][k+2:]
			}
			for k, key := range keys {
				if key != "" && !slices.Contains(keys[:k], key) {
					byLower[key] = append(byLower[key], int32(i))
				}
			}
		}
		for key, want := range byID {
			if got := slices.Collect(x.idDocs(key)); !slices.Equal(got, want) {
				t.Errorf("id %q: got %v, want %v", key, got, want)
			}
		}
		for key, want := range byLower {
			if got := slices.Collect(x.lowerDocs(key)); !slices.Equal(got, want) {
				t.Errorf("tails %v, lowercase %q: got %v, want %v", tails, key, got, want)
			}
		}
		for _, key := range []string{"nothing", "GitHub__Create_Issue", "tail"} {
			if got := slices.Collect(x.lowerDocs(key)); !slices.Equal(got, byLower[key]) {
				t.Errorf("tails %v, lowercase %q: got %v, want %v", tails, key, got, byLower[key])
			}
		}
	}
}
