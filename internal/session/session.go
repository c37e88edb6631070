// Package session holds per-session state that must outlive a request — discovery selections,
// kept raw outputs — behind one Store interface with an in-memory and a SQLite implementation.
package session

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// Store keeps session state. Implementations are safe for concurrent use and durable to the
// degree their medium allows; every method is atomic (a crash leaves either all or none of it).
type Store interface {
	// Selected returns the tool names discovery activated in the session, in activation order.
	Selected(ctx context.Context, session string) ([]string, error)
	// AddSelected appends names not yet selected, keeping the order, and returns the ones added.
	AddSelected(ctx context.Context, session string, names []string) ([]string, error)
	// PutBlob keeps data under key for the session (e.g. the raw output behind a compacted result).
	PutBlob(ctx context.Context, session, key string, data []byte) error
	// Blob returns the data kept under key; ErrNotFound if none.
	Blob(ctx context.Context, key string) ([]byte, error)
	Close() error
}

// ErrNotFound is returned for a key the store does not hold.
var ErrNotFound = errors.New("not found")

// Memory is a Store that lives as long as the process.
type Memory struct {
	mu    sync.Mutex
	sel   map[string][]string
	blobs map[string][]byte
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{sel: map[string][]string{}, blobs: map[string][]byte{}}
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
	return added, nil
}

// PutBlob implements Store.
func (m *Memory) PutBlob(_ context.Context, _ string, key string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs[key] = slices.Clone(data)
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
	return slices.Clone(b), nil
}

// Close implements Store.
func (m *Memory) Close() error { return nil }
