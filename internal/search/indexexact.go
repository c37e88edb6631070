package search

import (
	"iter"
	"strings"
)

// exactIndex finds the documents an exact request names: by id, and by lowercased name,
// id and (with tails) name tail. It keeps references to the documents it was built from,
// not their keys; a ranker updated with the same ids and names at every position shares it.
type exactIndex struct {
	docs    []RankDoc
	byID    RefTable // ref: document
	byLower RefTable // ref: document<<2 | lowerName, lowerID or lowerTail
	tails   bool
}

// The key of a document a byLower reference stands for.
const (
	lowerName = iota
	lowerID
	lowerTail // the name's tail after its last "__"
)

func newExactIndex(docs []RankDoc, tails bool) *exactIndex {
	x := &exactIndex{docs: docs, byID: NewRefTable(len(docs)), byLower: NewRefTable(2 * len(docs)), tails: tails}
	for i := range docs {
		d := &docs[i]
		ref := uint32(i)
		x.byID.Add(x.byID.Hash(d.ID), ref)
		// Every key that differs from the ones before it, as lowercase strings.
		x.byLower.Add(x.hashLower(d.Name), ref<<2|lowerName)
		if d.ID != d.Name && !sameLower(d.ID, d.Name) {
			x.byLower.Add(x.hashLower(d.ID), ref<<2|lowerID)
		}
		if tail, ok := x.tail(d.Name); ok && !sameLower(tail, d.Name) && !sameLower(tail, d.ID) {
			x.byLower.Add(x.hashLower(tail), ref<<2|lowerTail)
		}
	}
	return x
}

func (x *exactIndex) hashLower(s string) uint32 {
	if isASCII(s) {
		return x.byLower.HashLower(s)
	}
	return x.byLower.Hash(jsLower(s))
}

// tail returns the part of name after its last "__" in lowercase terms: for an ASCII
// name, a part of name itself, which lowercases to the same bytes.
func (x *exactIndex) tail(name string) (string, bool) {
	if !x.tails {
		return "", false
	}
	s := name
	if !isASCII(s) {
		s = jsLower(s)
	}
	if k := strings.LastIndex(s, "__"); k >= 0 && k+2 < len(s) {
		return s[k+2:], true
	}
	return "", false
}

// sameLower reports whether jsLower(a) == jsLower(b).
func sameLower(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return strings.EqualFold(a, b) // for ASCII, exactly equal lowercase forms
	}
	return jsLower(a) == jsLower(b)
}

// equalLower reports whether jsLower(s) == lower.
func equalLower(s, lower string) bool {
	if !isASCII(s) {
		return jsLower(s) == lower
	}
	return EqualLower(s, lower)
}

// idDocs yields the documents whose id is id, in document order.
func (x *exactIndex) idDocs(id string) iter.Seq[int32] {
	return func(yield func(int32) bool) {
		for ref := range x.byID.Refs(x.byID.Hash(id)) {
			if x.docs[ref].ID == id && !yield(int32(ref)) {
				return
			}
		}
	}
}

// lowerDocs yields the documents with a key whose lowercase form is lower, in document
// order, each once.
func (x *exactIndex) lowerDocs(lower string) iter.Seq[int32] {
	return func(yield func(int32) bool) {
		last := int32(-1)
		for ref := range x.byLower.Refs(x.byLower.Hash(lower)) {
			d := &x.docs[ref>>2]
			var ok bool
			switch ref & 3 {
			case lowerName:
				ok = equalLower(d.Name, lower)
			case lowerID:
				ok = equalLower(d.ID, lower)
			default:
				tail, _ := x.tail(d.Name)
				ok = equalLower(tail, lower)
			}
			if doc := int32(ref >> 2); ok && doc != last {
				last = doc
				if !yield(doc) {
					return
				}
			}
		}
	}
}
