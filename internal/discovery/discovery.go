package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/search"
	"github.com/nodmix/nodmix/internal/session"
)

// The tool's errors, verbatim from the documented system. The model reads them as tool results.
var (
	ErrDisabled   = errors.New("Tool discovery is disabled. Enable tools.discoveryMode or mcp.discoveryMode to use search_tool_bm25.")
	ErrEmptyQuery = errors.New("Query is required and must not be empty.")
	ErrBadLimit   = errors.New("Limit must be a positive integer.")
)

// Match is one ranked tool in Details.
type Match struct {
	Name        string   `json:"name"`
	Label       string   `json:"label"`
	Description string   `json:"description"`
	ServerName  string   `json:"server_name,omitempty"`
	MCPToolName string   `json:"mcp_tool_name,omitempty"`
	SchemaKeys  []string `json:"schema_keys"`
	Score       float64  `json:"score"`
}

// Details is the runtime-only result of a search, for renderers (`nodmix tools search --json`).
type Details struct {
	Query               string   `json:"query"`
	Limit               int      `json:"limit"`
	TotalTools          int      `json:"total_tools"`
	ActivatedTools      []string `json:"activated_tools"`
	ActiveSelectedTools []string `json:"active_selected_tools"`
	Tools               []Match  `json:"tools"`
}

// content is the model-visible summary, keys in the documented order.
type content struct {
	Query          string   `json:"query"`
	ActivatedTools []string `json:"activated_tools"`
	MatchCount     int      `json:"match_count"`
	TotalTools     int      `json:"total_tools"`
}

// Content renders the model-visible JSON text of d.
func (d *Details) Content() string {
	b, _ := json.Marshal(content{Query: d.Query, ActivatedTools: d.ActivatedTools, MatchCount: len(d.Tools), TotalTools: d.TotalTools})
	return string(b)
}

// Service runs discovery for every session. Selections live in the Store, keyed by session id, as
// tool ids; the index over a session's hidden corpus is cached per snapshot and corpus, so sessions
// with the same corpus share it.
// A Service is safe for concurrent use.
type Service struct {
	rulesMu sync.RWMutex
	rules   Rules
	store   session.Store
	// onActivate, if set, is called after a session activated tools (views refresh their lists).
	onActivate func(session string)

	mu       sync.Mutex
	tokens   *search.Corpus // every tool of snapshot corpusAt, tokenized once, in entry order
	docs     []search.Doc   // the documents of tokens
	corpusAt *catalog.Snapshot
	cache    map[[32]byte]*search.BM25 // by subsetKey of the indexed positions
	order    []cachedIndex             // the cache's entries, oldest first
	// cachedDocs is the documents the cached indexes hold together, at most maxDocs: an index
	// is about the size of its corpus, so a count of entries alone bounds nothing at 10,000 tools.
	cachedDocs, maxDocs int
}

// cachedIndex is an entry of the index cache: its key, and the documents it indexes.
type cachedIndex struct {
	key  [32]byte
	docs int
}

// NewService returns a discovery service.
func NewService(rules Rules, store session.Store, onActivate func(session string)) *Service {
	return &Service{rules: rules, store: store, onActivate: onActivate, cache: map[[32]byte]*search.BM25{}, maxDocs: maxCachedDocs}
}

// Rules returns the service's rules.
func (s *Service) Rules() Rules {
	s.rulesMu.RLock()
	defer s.rulesMu.RUnlock()
	return s.rules
}

// SetRules replaces the rules (auto mode switching on or off as the catalog grows or shrinks).
func (s *Service) SetRules(r Rules) {
	s.rulesMu.Lock()
	s.rules = r
	s.rulesMu.Unlock()
}

// selected returns the session's selected ids as a set.
func (s *Service) selected(ctx context.Context, sess string) (map[string]bool, error) {
	ids, err := s.store.Selected(ctx, sess)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set, nil
}

// Visible returns the tools a session sees: those not hidden, and hidden ones it activated.
func (s *Service) Visible(ctx context.Context, snap *catalog.Snapshot, sess string) ([]*catalog.Entry, error) {
	visible, _, err := s.Split(ctx, snap, sess)
	return visible, err
}

// Split returns, from one read of the session's selections, the tools the session sees and its
// hidden corpus (what search_tool_bm25 searches).
func (s *Service) Split(ctx context.Context, snap *catalog.Snapshot, sess string) (visible []*catalog.Entry, corpus []*catalog.Tool, err error) {
	sel, err := s.selected(ctx, sess)
	if err != nil {
		return nil, nil, err
	}
	inCorpus := s.inCorpus(sel)
	for _, e := range snap.Entries() {
		if inCorpus(&e.Tool) {
			corpus = append(corpus, &e.Tool)
		} else {
			visible = append(visible, e)
		}
	}
	return visible, corpus, nil
}

// Corpus returns the session's hidden, not yet activated tools: what search_tool_bm25 searches.
func (s *Service) Corpus(ctx context.Context, snap *catalog.Snapshot, sess string) ([]*catalog.Tool, error) {
	_, corpus, err := s.Split(ctx, snap, sess)
	return corpus, err
}

// inCorpus reports, for a session with selection sel, whether a tool is in its corpus: hidden by
// the rules and not activated.
func (s *Service) inCorpus(sel map[string]bool) func(*catalog.Tool) bool {
	rules := s.Rules()
	return func(t *catalog.Tool) bool { return rules.Hidden(t) && !sel[t.ID] }
}

// corpusOf returns the positions in entries of the corpus of a session with selection sel.
func (s *Service) corpusOf(entries []*catalog.Entry, sel map[string]bool) []int {
	inCorpus := s.inCorpus(sel)
	corpus := []int{} // never nil: a nil subset indexes every tool
	for i, e := range entries {
		if inCorpus(&e.Tool) {
			corpus = append(corpus, i)
		}
	}
	return corpus
}

// Prepare does ahead of time what the first search over snap would: it tokenizes the snapshot's
// tools and indexes the corpus of a session that has activated nothing yet, as every new session
// has. It is for a long-running face to call when the catalog changes; searches do the same work
// themselves when it has not been done.
func (s *Service) Prepare(snap *catalog.Snapshot) error {
	if !s.Rules().Enabled() {
		return nil
	}
	_, err := s.index(snap, s.corpusOf(snap.Entries(), nil))
	return err
}

// ParseLimit reads the limit argument: absent or null means DefaultLimit; anything but a positive
// integer is ErrBadLimit. The documented tool has no upper bound beyond the corpus size, so a
// larger integer (1e12) is every match, not an error.
func ParseLimit(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return DefaultLimit, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || f <= 0 {
		return 0, ErrBadLimit
	}
	return int(min(f, math.MaxInt32)), nil
}

// Search ranks the session's hidden corpus, activates up to limit matches for the session and
// returns what happened. Errors other than the documented ones are failures of the store.
func (s *Service) Search(ctx context.Context, snap *catalog.Snapshot, sess, query string, limit int) (*Details, error) {
	if !s.Rules().Enabled() {
		return nil, ErrDisabled
	}
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, ErrEmptyQuery
	}
	if limit <= 0 {
		return nil, ErrBadLimit
	}
	sel, err := s.selected(ctx, sess)
	if err != nil {
		return nil, err
	}
	entries := snap.Entries()
	corpus := s.corpusOf(entries, sel)
	ix, err := s.index(snap, corpus)
	if err != nil {
		return nil, err
	}
	hits, err := ix.Search(query, limit)
	if err != nil {
		return nil, err
	}
	d := &Details{Query: query, Limit: limit, TotalTools: len(corpus), ActivatedTools: []string{}, Tools: []Match{}}
	var ids []string
	for _, h := range hits {
		t := &entries[h.Index].Tool
		ids = append(ids, t.ID)
		d.Tools = append(d.Tools, Match{
			Name:        t.Name,
			Label:       t.DisplayLabel(),
			Description: t.SummaryText(),
			ServerName:  t.Server,
			MCPToolName: t.MCPToolName,
			SchemaKeys:  nonNil(t.SchemaKeys()),
			Score:       math.Round(h.Score*1e6) / 1e6,
		})
	}
	if len(ids) > 0 {
		if _, err := s.store.AddSelected(ctx, sess, ids); err != nil {
			return nil, fmt.Errorf("discovery: activate: %w", err)
		}
		for _, m := range d.Tools {
			d.ActivatedTools = append(d.ActivatedTools, m.Name)
		}
		if s.onActivate != nil {
			s.onActivate(sess)
		}
	}
	// Read again rather than derived: a concurrent search of the session may have activated more.
	all, err := s.store.Selected(ctx, sess)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	d.ActiveSelectedTools = []string{}
	for _, id := range all {
		if e, ok := snap.ByID(id); ok {
			d.ActiveSelectedTools = append(d.ActiveSelectedTools, e.Tool.Name)
		}
	}
	return d, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Doc turns a tool into the seed's BM25 document.
func Doc(t *catalog.Tool) search.Doc {
	return search.Doc{
		Name:        t.Name,
		Label:       t.DisplayLabel(),
		ServerName:  t.Server,
		MCPToolName: t.MCPToolName,
		Summary:     t.SummaryText(),
		SchemaKeys:  t.SchemaKeys(),
	}
}

// The index cache keeps at most 64 indexes, of at most 200,000 documents together (about 20 MB:
// 1.1 MB per 10,000; CorpusIndex/10000 in the README). The newest index is kept whatever its size.
const (
	maxCachedIndexes = 64
	maxCachedDocs    = 200_000
)

// index returns the BM25+ index over the entries of snap at positions subset (ascending); its hit
// indices are positions in snap.Entries(). Tools are tokenized once per snapshot (and only the
// changed ones when the catalog changes); each distinct subset is indexed once and cached.
func (s *Service) index(snap *catalog.Snapshot, subset []int) (*search.BM25, error) {
	// Positions name tools only within one snapshot: the cache is cleared when it changes.
	key := subsetKey(subset)
	s.mu.Lock()
	if s.corpusAt != snap {
		var docs []search.Doc
		if s.corpusAt == nil {
			docs = docsOf(snap.Entries())
		} else {
			docs = docsAfter(s.corpusAt.Entries(), s.docs, snap.Entries())
		}
		s.docs = docs
		if s.tokens == nil {
			s.tokens = search.NewCorpus(docs)
		} else {
			s.tokens = s.tokens.Update(docs)
		}
		s.corpusAt = snap
		clear(s.cache)
		s.order, s.cachedDocs = s.order[:0], 0
	}
	full := s.tokens
	if ix, ok := s.cache[key]; ok {
		s.mu.Unlock()
		return ix, nil
	}
	s.mu.Unlock()
	ix, err := full.Index(subset)
	if err != nil {
		return nil, fmt.Errorf("discovery: index: %w", err)
	}
	s.mu.Lock()
	if _, ok := s.cache[key]; !ok && s.tokens == full {
		s.cache[key] = ix
		s.order = append(s.order, cachedIndex{key: key, docs: len(subset)})
		s.cachedDocs += len(subset)
		for len(s.order) > 1 && (len(s.order) > maxCachedIndexes || s.cachedDocs > s.maxDocs) {
			delete(s.cache, s.order[0].key)
			s.cachedDocs -= s.order[0].docs
			s.order = s.order[1:]
		}
	}
	s.mu.Unlock()
	return ix, nil
}

func subsetKey(subset []int) [32]byte {
	h := sha256.New()
	var buf [512]byte
	b := buf[:0]
	for _, i := range subset {
		b = binary.LittleEndian.AppendUint32(b, uint32(i))
		if len(b) == len(buf) {
			h.Write(b)
			b = buf[:0]
		}
	}
	h.Write(b)
	var key [32]byte
	h.Sum(key[:0])
	return key
}
