package discovery

import (
	"context"
	"crypto/sha256"
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
// tool ids; the index over a session's hidden corpus is cached by catalog version and selection.
// A Service is safe for concurrent use.
type Service struct {
	rulesMu sync.RWMutex
	rules   Rules
	store   session.Store
	// OnActivate, if set, is called after a session activated tools (views refresh their lists).
	onActivate func(session string)

	mu         sync.Mutex
	tokens     *search.Corpus // every tool of snapshot corpusAt, tokenized once
	corpusAt   *catalog.Snapshot
	corpusDocs map[string]int // tool id → corpus index
	cache      map[[32]byte]*search.BM25
	order      [][32]byte
}

// NewService returns a discovery service.
func NewService(rules Rules, store session.Store, onActivate func(session string)) *Service {
	return &Service{rules: rules, store: store, onActivate: onActivate, cache: map[[32]byte]*search.BM25{}}
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
func (s *Service) selected(ctx context.Context, sess string) (map[string]bool, []string, error) {
	ids, err := s.store.Selected(ctx, sess)
	if err != nil {
		return nil, nil, fmt.Errorf("discovery: %w", err)
	}
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set, ids, nil
}

// Visible returns the tools a session sees: those not hidden, and hidden ones it activated.
func (s *Service) Visible(ctx context.Context, snap *catalog.Snapshot, sess string) ([]*catalog.Entry, error) {
	sel, _, err := s.selected(ctx, sess)
	if err != nil {
		return nil, err
	}
	rules := s.Rules()
	var out []*catalog.Entry
	for _, e := range snap.Entries() {
		if !rules.Hidden(&e.Tool) || sel[e.Tool.ID] {
			out = append(out, e)
		}
	}
	return out, nil
}

// Split returns, from one read of the session's selections, the tools the session sees and its
// hidden corpus (what search_tool_bm25 searches).
func (s *Service) Split(ctx context.Context, snap *catalog.Snapshot, sess string) (visible []*catalog.Entry, corpus []*catalog.Tool, err error) {
	sel, _, err := s.selected(ctx, sess)
	if err != nil {
		return nil, nil, err
	}
	rules := s.Rules()
	for _, e := range snap.Entries() {
		hidden := rules.Hidden(&e.Tool)
		if !hidden || sel[e.Tool.ID] {
			visible = append(visible, e)
		} else {
			corpus = append(corpus, &e.Tool)
		}
	}
	return visible, corpus, nil
}

// Corpus returns the session's hidden, not yet activated tools: what search_tool_bm25 searches.
func (s *Service) Corpus(ctx context.Context, snap *catalog.Snapshot, sess string) ([]*catalog.Tool, error) {
	sel, _, err := s.selected(ctx, sess)
	if err != nil {
		return nil, err
	}
	return s.corpus(snap, sel), nil
}

func (s *Service) corpus(snap *catalog.Snapshot, sel map[string]bool) []*catalog.Tool {
	rules := s.Rules()
	var out []*catalog.Tool
	for _, e := range snap.Entries() {
		if rules.Hidden(&e.Tool) && !sel[e.Tool.ID] {
			out = append(out, &e.Tool)
		}
	}
	return out
}

// ParseLimit reads the limit argument: absent or null means DefaultLimit; anything but a positive
// integer is ErrBadLimit.
func ParseLimit(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return DefaultLimit, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || f <= 0 || f > math.MaxInt32 {
		return 0, ErrBadLimit
	}
	return int(f), nil
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
	sel, _, err := s.selected(ctx, sess)
	if err != nil {
		return nil, err
	}
	corpus := s.corpus(snap, sel)
	ix, idx, err := s.index(snap, corpus)
	if err != nil {
		return nil, err
	}
	hits, err := ix.Search(query, len(corpus))
	if err != nil {
		return nil, err
	}
	d := &Details{Query: query, Limit: limit, TotalTools: len(corpus), ActivatedTools: []string{}, Tools: []Match{}}
	var ids []string
	for _, h := range hits {
		t := corpus[idx[h.Index]]
		if sel[t.ID] {
			continue
		}
		if len(d.Tools) == limit {
			break
		}
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
	_, all, err := s.selected(ctx, sess)
	if err != nil {
		return nil, err
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

const maxCachedIndexes = 64

// index returns the BM25+ index over corpus (a subset of snap) and the map from the index's
// document numbers to positions in corpus. Tools are tokenized once per snapshot (and only the
// changed ones when the catalog changes); each distinct corpus is indexed once and cached.
func (s *Service) index(snap *catalog.Snapshot, corpus []*catalog.Tool) (*search.BM25, map[int]int, error) {
	s.mu.Lock()
	if s.corpusAt != snap {
		entries := snap.Entries()
		docs := make([]search.Doc, len(entries))
		ids := make(map[string]int, len(entries))
		for i, e := range entries {
			docs[i] = Doc(&e.Tool)
			ids[e.Tool.ID] = i
		}
		if s.tokens == nil {
			s.tokens = search.NewCorpus(docs)
		} else {
			s.tokens = s.tokens.Update(docs)
		}
		s.corpusAt, s.corpusDocs = snap, ids
		clear(s.cache)
		s.order = s.order[:0]
	}
	full, ids := s.tokens, s.corpusDocs
	subset := make([]int, len(corpus))
	idx := make(map[int]int, len(corpus))
	h := sha256.New()
	for i, t := range corpus {
		subset[i] = ids[t.ID]
		idx[subset[i]] = i
		h.Write([]byte(t.ID))
		h.Write([]byte{0})
	}
	var key [32]byte
	h.Sum(key[:0])
	if ix, ok := s.cache[key]; ok {
		s.mu.Unlock()
		return ix, idx, nil
	}
	s.mu.Unlock()
	ix, err := full.Index(subset)
	if err != nil {
		return nil, nil, fmt.Errorf("discovery: index: %w", err)
	}
	s.mu.Lock()
	if _, ok := s.cache[key]; !ok && s.tokens == full {
		s.cache[key] = ix
		s.order = append(s.order, key)
		if len(s.order) > maxCachedIndexes {
			delete(s.cache, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.mu.Unlock()
	return ix, idx, nil
}
