package toolsearch

import (
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/search"
)

// lookups are the exact-match tables of an index: entries by id and by name (find, matches),
// and by id or name ignoring case (the exact tier of search). They keep references to the
// entries, not the names: a probe reads the name from the entry it may be.
type lookups struct {
	exact search.RefTable // ref: entry<<2 | refID, refName or refToolName
	lower search.RefTable // ref: entry<<1 | refID, or refName for a name that is not the id
}

// Which name of an entry a reference stands for.
const (
	refID = iota
	refName
	refToolName // the bare name of an MCP tool, when it differs from the model-facing name
)

// toolName is the bare name an MCP tool is found by as well, or "".
func toolName(t *catalog.Tool) string {
	if t.Source == catalog.SourceMCP && t.MCPToolName != "" && t.MCPToolName != t.Name {
		return t.MCPToolName
	}
	return ""
}

func newLookups(entries []*catalog.Entry) *lookups {
	l := &lookups{exact: search.NewRefTable(2 * len(entries)), lower: search.NewRefTable(len(entries))}
	for i, e := range entries {
		t := &e.Tool
		ref := uint32(i)
		l.exact.Add(l.exact.Hash(t.ID), ref<<2|refID)
		l.exact.Add(l.exact.Hash(t.Name), ref<<2|refName)
		if n := toolName(t); n != "" {
			l.exact.Add(l.exact.Hash(n), ref<<2|refToolName)
		}
		l.lower.Add(l.lower.HashLower(t.ID), ref<<1|refID)
		if t.Name != t.ID { // a name equal to the id but for case repeats an entry: search compacts it
			l.lower.Add(l.lower.HashLower(t.Name), ref<<1|refName)
		}
	}
	return l
}

// byID returns the entry whose id is id.
func (ix *Index) byID(id string) (int, bool) {
	found, ok := -1, false
	for ref := range ix.lookups.exact.Refs(ix.lookups.exact.Hash(id)) {
		if e := int(ref >> 2); ref&3 == refID && ix.entries[e].Tool.ID == id {
			found, ok = e, true // as a map would, the last of equal ids
		}
	}
	return found, ok
}

// byName returns the entries named name, or whose bare MCP tool name it is, in entry order.
func (ix *Index) byName(name string) []int {
	var out []int
	for ref := range ix.lookups.exact.Refs(ix.lookups.exact.Hash(name)) {
		t := &ix.entries[ref>>2].Tool
		if (ref&3 == refName && t.Name == name) || (ref&3 == refToolName && toolName(t) == name) {
			out = append(out, int(ref>>2))
		}
	}
	return out
}

// byLower returns the entries whose lowercased id or name is lower, in entry order; an entry
// may come twice.
func (ix *Index) byLower(lower string) []int {
	var out []int
	for ref := range ix.lookups.lower.Refs(ix.lookups.lower.Hash(lower)) {
		t := &ix.entries[ref>>1].Tool
		key := t.ID
		if ref&1 == refName {
			key = t.Name
		}
		if search.EqualLower(key, lower) {
			out = append(out, int(ref>>1))
		}
	}
	return out
}
