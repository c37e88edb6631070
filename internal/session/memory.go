package session

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/llm"
)

// Memory is a Store that lives as long as the process. Everything goes in and out as deep copies.
type Memory struct {
	mu       sync.Mutex
	sel      map[string][]string
	blobs    map[string]memBlob
	sessions map[string]*memSession
	leases   map[string]memLease
	writes   uint64    // counts writes to sessions; a session's version is the count at its last write
	last     time.Time // latest Stamp recorded
}

type memBlob struct {
	session string
	data    []byte
}

type memLease struct {
	holder  Holder
	expires time.Time
}

type memSession struct {
	info    Info
	msgs    []llm.Message
	version uint64
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{sel: map[string][]string{}, blobs: map[string]memBlob{}, sessions: map[string]*memSession{}, leases: map[string]memLease{}}
}

var _ Store = (*Memory)(nil)

// Selected implements Store.
func (m *Memory) Selected(_ context.Context, s string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.sel[s]), nil
}

// AddSelected implements Store.
func (m *Memory) AddSelected(_ context.Context, s string, names []string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var added []string
	for _, n := range names {
		if !slices.Contains(m.sel[s], n) {
			m.sel[s] = append(m.sel[s], n)
			added = append(added, n)
		}
	}
	if sel := m.sel[s]; len(sel) > MaxSelected {
		m.sel[s] = slices.Clone(sel[len(sel)-MaxSelected:])
	}
	return added, nil
}

// PutBlob implements Store.
func (m *Memory) PutBlob(_ context.Context, s string, key string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs[key] = memBlob{session: s, data: slices.Clone(data)}
	return nil
}

// Blob implements Store.
func (m *Memory) Blob(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[key]
	if !ok {
		return nil, ErrNotFound
	}
	return slices.Clone(b.data), nil
}

// Session implements Store.
func (m *Memory) Session(_ context.Context, key string) (*Info, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[key]
	if !ok {
		return nil, ErrNotFound
	}
	return s.info.Clone(), nil
}

// SessionsPage implements Store.
func (m *Memory) SessionsPage(_ context.Context, after Cursor, limit int) ([]Info, Cursor, error) {
	if err := CheckLimit(limit); err != nil {
		return nil, Cursor{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock() // until the page's rows are copied
	var out []Info
	for _, s := range m.sessions {
		if !after.Before(&s.info) {
			out = append(out, s.info)
		}
	}
	slices.SortFunc(out, listingOrder)
	var next Cursor
	if len(out) > limit {
		out = out[:limit]
		next = CursorOf(&out[limit-1])
	}
	page := make([]Info, len(out))
	for i := range out {
		page[i] = *out[i].Clone()
	}
	return page, next, nil
}

// listingOrder is the order of the listing: most recently updated first, then by key.
func listingOrder(a, b Info) int {
	if c := b.Updated.Compare(a.Updated); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

// Transcript implements Store.
func (m *Memory) Transcript(_ context.Context, key string) ([]llm.Message, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[key]
	if !ok {
		return nil, ErrNotFound
	}
	return cloneMessages(s.msgs), nil
}

// Append implements Store.
func (m *Memory) Append(_ context.Context, key string, base int, msgs []llm.Message) (*Info, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	msgs = cloneMessages(msgs) // outside the lock
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[key]
	if n := s.length(); n != base {
		return nil, ConflictError(s != nil)
	}
	if s == nil {
		s = m.create(key)
	} else if len(msgs) == 0 {
		return s.info.Clone(), nil
	}
	s.msgs = append(s.msgs, msgs...)
	s.info.Messages = len(s.msgs)
	m.wrote(s)
	return s.info.Clone(), nil
}

// Update implements Store. fn runs outside the lock on a copy; if the session changed meanwhile,
// fn runs again on the new state.
func (m *Memory) Update(_ context.Context, key string, fn func(*Info) error) (*Info, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	for {
		m.mu.Lock()
		var in Info
		var version uint64
		if s := m.sessions[key]; s != nil {
			in, version = *s.info.Clone(), s.version
		} else {
			in.Key = key
		}
		m.mu.Unlock()
		if in.Overrides == nil {
			in.Overrides = map[string]string{}
		}
		if in.Counters == nil {
			in.Counters = map[string]int64{}
		}
		if err := fn(&in); err != nil {
			return nil, err
		}

		m.mu.Lock()
		s := m.sessions[key]
		if s.versionOrZero() != version {
			m.mu.Unlock()
			continue
		}
		if s == nil {
			s = m.create(key)
		}
		s.info.Model, s.info.Agent = in.Model, in.Agent
		s.info.Overrides, s.info.Counters = cloneMap(in.Overrides), cloneMap(in.Counters)
		m.wrote(s)
		out := s.info.Clone()
		m.mu.Unlock()
		return out, nil
	}
}

// DeleteSession implements Store.
func (m *Memory) DeleteSession(_ context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[key]; !ok {
		return ErrNotFound
	}
	delete(m.sessions, key)
	delete(m.sel, key)
	delete(m.leases, key)
	for k, b := range m.blobs {
		if b.session == key {
			delete(m.blobs, k)
		}
	}
	return nil
}

// Lease takes the session key for h until ttl from now, or renews h's lease (the one of its
// Token). It returns ErrLeased, changing nothing, while another holder's lease keeps h out
// (Holder.KeepsOut). A key no session has yet can be leased; DeleteSession ends the lease.
func (m *Memory) Lease(_ context.Context, key string, h Holder, ttl time.Duration) error {
	if err := CheckLease(key, h.Token); err != nil {
		return err
	}
	if err := checkTTL(ttl); err != nil {
		return err
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[key]; ok && l.holder.KeepsOut(h.Token, l.expires, now) {
		return ErrLeased
	}
	m.leases[key] = memLease{holder: h, expires: now.Add(ttl)}
	return nil
}

// Unlease ends the lease of key that token took; a lease another holder took since is left.
func (m *Memory) Unlease(_ context.Context, key, token string) error {
	if err := CheckLease(key, token); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[key]; ok && l.holder.Token == token {
		delete(m.leases, key)
	}
	return nil
}

// Close implements Store.
func (m *Memory) Close() error { return nil }

// create adds an empty session; the caller holds m.mu and calls wrote next.
func (m *Memory) create(key string) *memSession {
	s := &memSession{info: Info{Key: key}}
	m.sessions[key] = s
	return s
}

// wrote stamps a write to s; the caller holds m.mu.
func (m *Memory) wrote(s *memSession) {
	m.last = Stamp(time.Now(), m.last)
	m.writes++
	s.version = m.writes
	s.info.Updated = m.last
	if s.info.Created.IsZero() {
		s.info.Created = m.last
	}
}

func (s *memSession) length() int {
	if s == nil {
		return 0
	}
	return len(s.msgs)
}

func (s *memSession) versionOrZero() uint64 {
	if s == nil {
		return 0
	}
	return s.version
}
