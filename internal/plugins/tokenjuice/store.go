package tokenjuice

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
)

// RawStore keeps the full output of compacted results behind their handles, so that
// tokenjuice_raw (and `nodmix tokenjuice raw HANDLE`) can return it for the rest of a session.
// Implementations must be safe for concurrent use. Put takes ownership of data: the caller must not
// modify it afterwards. Get returns ErrNotFound (wrapped or not) for an unknown or evicted handle.
type RawStore interface {
	Put(ctx context.Context, session, handle string, data []byte) error
	Get(ctx context.Context, handle string) ([]byte, error)
}

// ErrNotFound: no output is stored under the handle (never stored, or evicted).
var ErrNotFound = errors.New("no raw output stored under this handle")

// DefaultMaxRawBytes bounds the default in-memory store.
const DefaultMaxRawBytes = 64 << 20

// MemStore is the default RawStore: in memory, bounded by the total size of what it holds, evicting
// the least recently used output first. It lives as long as the process; the app supplies a
// persistent store for handles that must outlive it. Safe for concurrent use.
type MemStore struct {
	max int64

	mu    sync.Mutex
	size  int64
	order *list.List // of *memEntry, most recently used at the front
	byKey map[string]*list.Element
}

type memEntry struct {
	handle string
	data   []byte
}

var _ RawStore = (*MemStore)(nil)

// NewMemStore returns a store holding at most maxBytes of output (DefaultMaxRawBytes if ≤ 0).
func NewMemStore(maxBytes int64) *MemStore {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxRawBytes
	}
	return &MemStore{max: maxBytes, order: list.New(), byKey: map[string]*list.Element{}}
}

// Put stores data under handle, evicting older outputs to make room. An output larger than the
// whole store is refused. The session is not kept: eviction goes by size alone, and the store ends
// with the process.
func (m *MemStore) Put(_ context.Context, _, handle string, data []byte) error {
	if int64(len(data)) > m.max {
		return fmt.Errorf("raw output of %d bytes exceeds the store's %d bytes", len(data), m.max)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byKey[handle]; ok {
		m.size -= int64(len(el.Value.(*memEntry).data))
		m.order.Remove(el)
		delete(m.byKey, handle)
	}
	for m.size+int64(len(data)) > m.max {
		el := m.order.Back()
		e := el.Value.(*memEntry)
		m.order.Remove(el)
		delete(m.byKey, e.handle)
		m.size -= int64(len(e.data))
	}
	m.byKey[handle] = m.order.PushFront(&memEntry{handle: handle, data: data})
	m.size += int64(len(data))
	return nil
}

// Get returns the output stored under handle. The returned slice must not be modified.
func (m *MemStore) Get(_ context.Context, handle string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.byKey[handle]
	if !ok {
		return nil, ErrNotFound
	}
	m.order.MoveToFront(el)
	return el.Value.(*memEntry).data, nil
}

// Size returns the bytes held.
func (m *MemStore) Size() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.size
}

// NewHandle returns a fresh random handle, "tj_" and 12 hex digits: 48 random bits, short enough
// for the marker and far beyond guessing among a store's few thousand entries.
func NewHandle() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "tj_" + hex.EncodeToString(b[:])
}
