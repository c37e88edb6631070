package toolsearch

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// Hit is one ranked document: its position in the slice the ranker was built from, and its score.
type Hit struct {
	Doc   int
	Score float64
}

// Ranker ranks the catalog of an Index for a query. Search returns at most limit hits, best first,
// skipping documents for which allow (when not nil) returns false before counting them against
// the limit. A query with no usable terms returns no hits, never the whole catalog.
// Implementations must be safe for concurrent use.
type Ranker interface {
	Search(query string, limit int, allow func(doc int) bool) []Hit
}

// RankerFactory builds a ranker over tools; hit Doc values index this slice. The tools must not be
// modified.
type RankerFactory func(tools []*catalog.Tool) Ranker

// descriptionCap bounds the one-line description of a compact descriptor, in UTF-16 units.
const descriptionCap = 512

// Index is the searchable form of one catalog snapshot under one policy: the entries Tool Search
// serves (allowed, and neither hidden nor control tools), their ranker and lookup tables, and the
// compact descriptors, computed on first use. It is immutable and safe for concurrent use; build
// it once per snapshot (IndexCache does) and share it between runs.
type Index struct {
	snap    *catalog.Snapshot
	entries []*catalog.Entry // snapshot (id) order
	lookups *lookups
	ranker  Ranker
	sources SourceCounts
	key     [32]byte

	// desc caches the compact descriptors, made on first use: an index of 10,000 tools
	// serves a few, and a slot is a pointer rather than a descriptor and its once.
	desc []atomic.Pointer[Descriptor]
}

// NewIndex builds the index of snap. Entries the policy denies (when policy is not nil) are left
// out entirely: search, describe, call and suggestions never see them.
func NewIndex(snap *catalog.Snapshot, policy dispatch.Policy, rank RankerFactory) (*Index, error) {
	if snap == nil {
		return nil, errors.New("toolsearch: index needs a snapshot")
	}
	return newIndex(snap, served(snap, policy), rank, nil)
}

// served returns the entries of snap that Tool Search serves under policy, in snapshot order.
func served(snap *catalog.Snapshot, policy dispatch.Policy) []*catalog.Entry {
	var out []*catalog.Entry
	for _, e := range snap.Entries() {
		if catalogued(&e.Tool) && (policy == nil || policy.Allowed(&e.Tool)) {
			out = append(out, e)
		}
	}
	return out
}

// newIndex builds the index of entries, the served entries of snap. With prev, an index built by
// the same factory, its ranker builds the new one when it can, redoing the work of changed tools
// only.
func newIndex(snap *catalog.Snapshot, entries []*catalog.Entry, rank RankerFactory, prev *Index) (*Index, error) {
	if rank == nil {
		return nil, errors.New("toolsearch: index needs a ranker")
	}
	ix := &Index{snap: snap, entries: entries}
	// The lookup tables and the key are made while the ranker is built, on another CPU when
	// there is one: they depend on the names of the entries only. When a catalog change keeps
	// every name in place, the tables are the previous index's (they are only read).
	tables := func() {
		if prev == nil || !sameNames(prev.entries, entries) {
			ix.lookups = newLookups(entries)
		} else {
			ix.lookups = prev.lookups
		}
		ix.key = indexKey(snap.Version(), entries)
	}
	var wg sync.WaitGroup
	if runtime.GOMAXPROCS(0) > 1 && len(entries) >= minReadTools {
		wg.Go(tables)
	} else {
		tables()
	}
	tools := make([]*catalog.Tool, len(entries))
	for i, e := range entries {
		tools[i] = &e.Tool
		ix.sources.add(&e.Tool)
	}
	if up, ok := rankerOf(prev).(updater); ok {
		ix.ranker = up.update(tools)
	} else {
		ix.ranker = rank(tools)
	}
	ix.desc = make([]atomic.Pointer[Descriptor], len(entries))
	wg.Wait()
	return ix, nil
}

// sameNames reports whether a and b agree, position by position, on every field the lookup
// tables of an index read.
func sameNames(a, b []*catalog.Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i].Tool, &b[i].Tool
		if x.ID != y.ID || x.Name != y.Name || x.Source != y.Source || x.MCPToolName != y.MCPToolName {
			return false
		}
	}
	return true
}

func rankerOf(ix *Index) Ranker {
	if ix == nil {
		return nil
	}
	return ix.ranker
}

// catalogued reports whether Tool Search serves t: control tools and hidden tools stay out.
func catalogued(t *catalog.Tool) bool {
	return t.LoadMode != catalog.Hidden && !isControlName(t.Name)
}

// indexKey identifies an index by snapshot version and the exact ids it serves.
func indexKey(version uint64, entries []*catalog.Entry) [32]byte {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], version)
	h.Write(b[:])
	for _, e := range entries {
		h.Write([]byte(e.Tool.ID))
		h.Write([]byte{0})
	}
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

// Len is the number of entries Tool Search serves.
func (ix *Index) Len() int { return len(ix.entries) }

// descriptor returns the compact descriptor of entry i.
func (ix *Index) descriptor(i int) Descriptor {
	if d := ix.desc[i].Load(); d != nil {
		return *d
	}
	d := compact(&ix.entries[i].Tool) // racing first uses compute the same descriptor
	ix.desc[i].CompareAndSwap(nil, &d)
	return d
}

func compact(t *catalog.Tool) Descriptor {
	d := Descriptor{
		ID:          t.ID,
		Source:      sourceOf(t),
		SourceName:  owner(t),
		Name:        t.Name,
		Label:       t.DisplayLabel(),
		Description: oneLine(t.Description, descriptionCap),
		Input:       hintUnknown,
	}
	if t.Source == catalog.SourceMCP {
		tool := t.MCPToolName
		if tool == "" {
			tool = t.Name
		}
		d.MCP = &MCPInfo{ServerName: t.Server, SafeServerName: owner(t), ToolName: tool}
	}
	if trusted(t) {
		if schema, err := parseValue(t.Schema()); err == nil {
			d.Input = compactInputHint(schema)
		}
	}
	return d
}

func owner(t *catalog.Tool) string {
	if o := strings.TrimSpace(t.Owner); o != "" {
		return o
	}
	return "core"
}

// oneLine collapses white space and cuts s to n UTF-16 units, ending a cut with "...".
func oneLine(s string, n int) string {
	s = collapseSpace(s)
	if utf16Len(s) <= n {
		return s
	}
	return catalog.PrefixUTF16(s, n-3) + "..."
}

// describe returns the full description of entry i.
func (ix *Index) describe(i int) Description {
	t := &ix.entries[i].Tool
	d := Description{Descriptor: ix.descriptor(i), Parameters: json.RawMessage(`{}`)}
	d.Description = t.ModelDescription() // whole, unless a server listed megabytes
	if len(t.InputSchema) > 0 && json.Valid(t.InputSchema) {
		d.Parameters = t.InputSchema
	}
	return d
}

// search ranks the catalog for query (reference §2.4.8): an entry whose id is exactly the trimmed
// query wins alone; otherwise every entry whose id or name equals it, ignoring case, is an exact
// match. Exact matches come first, then the ranker's hits; at most limit entries are returned.
func (ix *Index) search(query string, limit int) []int {
	q := strings.TrimSpace(query)
	var exact []int
	if i, ok := ix.byID(q); ok {
		exact = []int{i}
	} else if q != "" {
		exact = ix.byLower(strings.ToLower(q))
		slices.Sort(exact)
		exact = slices.Compact(exact)
	}
	if limit == 1 && len(exact) == 1 {
		return exact
	}
	hits := ix.ranker.Search(query, limit+len(exact), nil)
	isExact := func(doc int) bool { return slices.Contains(exact, doc) }
	out := make([]int, 0, min(limit, len(hits)+len(exact)))
	// Exact matches the ranker did not find (a name made only of stop words) lead, in catalog
	// order; then ranked exact matches; then the rest of the ranking.
	for _, i := range exact {
		if !slices.ContainsFunc(hits, func(h Hit) bool { return h.Doc == i }) {
			out = append(out, i)
		}
	}
	for _, h := range hits {
		if isExact(h.Doc) {
			out = append(out, h.Doc)
		}
	}
	for _, h := range hits {
		if h.Doc >= 0 && h.Doc < len(ix.entries) && !isExact(h.Doc) {
			out = append(out, h.Doc)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// find resolves an id or name (reference §2.5.3): an exact id wins; otherwise a unique name.
func (ix *Index) find(needle string) (int, error) {
	needle = strings.TrimSpace(needle)
	if i, ok := ix.byID(needle); ok {
		return i, nil
	}
	named := ix.byName(needle)
	switch len(named) {
	case 1:
		return named[0], nil
	case 0:
		return -1, inputErr(ErrUnknownTool, "")
	}
	return -1, inputErr(ErrAmbiguous, "Ambiguous tool name: "+needle+"; use an exact tool id.")
}

// matches returns the entries an id or name names exactly, for argument repair.
func (ix *Index) matches(s string) []int {
	var out []int
	if i, ok := ix.byID(s); ok {
		out = append(out, i)
	}
	for _, i := range ix.byName(s) {
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}

// IndexCache keeps the indexes of the last few snapshots so that runs on an unchanged catalog
// share one. It is safe for concurrent use: callers that ask for a snapshot whose index is being
// built wait for that build rather than starting their own, so sessions that all open on a new
// catalog version (or the gateway's build ahead and a first search) pay for one build.
type IndexCache struct {
	rank   RankerFactory
	policy dispatch.Policy

	mu       sync.Mutex
	items    []*Index // most recent first
	building map[[32]byte]*pendingIndex
}

// pendingIndex is an index build in flight; done is closed once ix or err is set.
type pendingIndex struct {
	done    chan struct{}
	ix      *Index
	err     error
	waiters int // callers waiting on done, under the cache's mu: read by tests, to know a caller waits
}

// indexCacheSize is how many catalog versions stay indexed: the current one and a few that
// in-flight runs may still use.
const indexCacheSize = 4

// NewIndexCache returns a cache that builds indexes with rank, under policy (nil: the caller
// passes snapshots that are already filtered). The policy must always answer the same for a
// tool: the index of a snapshot is reused without asking it again.
func NewIndexCache(policy dispatch.Policy, rank RankerFactory) *IndexCache {
	return &IndexCache{rank: rank, policy: policy, building: map[[32]byte]*pendingIndex{}}
}

// Index returns the index of snap, building it when the snapshot's version or tool set is new.
func (c *IndexCache) Index(snap *catalog.Snapshot) (*Index, error) {
	// Every call of a Tool Search run asks for its index, mostly with the very snapshot an index
	// was built from: snapshots are immutable, so that one is found without filtering the catalog.
	if ix := c.lookup(func(ix *Index) bool { return ix.snap == snap }); ix != nil {
		return ix, nil
	}
	// An equal snapshot (same version, same served tools) shares the index; the key needs the
	// filtered entry list, which is far cheaper than an index build.
	entries := served(snap, c.policy)
	key := indexKey(snap.Version(), entries)
	c.mu.Lock()
	if ix := c.lookupLocked(func(ix *Index) bool { return ix.key == key }); ix != nil {
		c.mu.Unlock()
		return ix, nil
	}
	if p, ok := c.building[key]; ok {
		p.waiters++
		c.mu.Unlock()
		<-p.done
		return p.ix, p.err
	}
	p := &pendingIndex{done: make(chan struct{})}
	c.building[key] = p
	// The latest index is the likeliest to share most tools with the new snapshot: a server that
	// reconnects changes its own tools only.
	prev := c.latestLocked()
	c.mu.Unlock()

	c.build(p, key, func() (*Index, error) { return newIndex(snap, entries, c.rank, prev) })
	return p.ix, p.err
}

// Cached reports whether the index of snap is built and kept, without building it or counting
// as a use of it. The tests of this package and of app use it to know a build has happened.
func (c *IndexCache) Cached(snap *catalog.Snapshot) bool {
	key := indexKey(snap.Version(), served(snap, c.policy))
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.ContainsFunc(c.items, func(ix *Index) bool { return ix.snap == snap || ix.key == key })
}

// Holds reports whether ix is one of the indexes the cache keeps: one it has let go of is
// reachable only from whoever still holds it.
func (c *IndexCache) Holds(ix *Index) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.items, ix)
}

// build runs the build of p, caches its index and releases its waiters, even when the build
// panics: the panic goes on up, and the waiters see an error rather than wait forever.
func (c *IndexCache) build(p *pendingIndex, key [32]byte, run func() (*Index, error)) {
	defer func() {
		if p.ix == nil && p.err == nil {
			p.err = errIndexBuild
		}
		c.mu.Lock()
		delete(c.building, key)
		if p.err == nil {
			c.items = append([]*Index{p.ix}, c.items...)
			if len(c.items) > indexCacheSize {
				c.items = c.items[:indexCacheSize]
			}
		}
		c.mu.Unlock()
		close(p.done)
	}()
	p.ix, p.err = run()
}

// errIndexBuild is what the waiters of a build that panicked get.
var errIndexBuild = errors.New("toolsearch: index build failed")

// latestLocked returns the index built or used last, or nil. c.mu is held.
func (c *IndexCache) latestLocked() *Index {
	if len(c.items) == 0 {
		return nil
	}
	return c.items[0]
}

// lookup returns the first cached index that match accepts, moving it to the front, or nil.
func (c *IndexCache) lookup(match func(*Index) bool) *Index {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lookupLocked(match)
}

// lookupLocked is lookup with c.mu held.
func (c *IndexCache) lookupLocked(match func(*Index) bool) *Index {
	for i, ix := range c.items {
		if match(ix) {
			copy(c.items[1:i+1], c.items[:i])
			c.items[0] = ix
			return ix
		}
	}
	return nil
}
