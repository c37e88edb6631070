package tavily

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/nodmix/nodmix/internal/config"
)

// Cache sizing: TTL comes from tools.web.search.cacheTtlMinutes (the config's default when the host
// gives none); the bound keeps a long-running gateway from growing without limit (the reference
// used an unbounded map).
const (
	DefaultCacheTTL   = config.DefaultWebCacheTTL
	cacheCapacity     = 256
	settingCacheTTL   = "tools.web.search.cacheTtlMinutes"
	settingMaxResults = "tools.web.search.maxResults"
	fingerprintDomain = "nodmix/tavily/api-key-fingerprint\x00"
)

// lru is a bounded least-recently-used cache with a TTL per entry. A zero or negative TTL disables
// it. It is safe for concurrent use; values are shared with callers, who must not modify them.
type lru[V any] struct {
	ttl      time.Duration
	capacity int

	mu    sync.Mutex
	order *list.List // front = most recently used; elements hold *lruEntry[V]
	items map[string]*list.Element
}

type lruEntry[V any] struct {
	key     string
	val     V
	expires time.Time
}

func newLRU[V any](capacity int, ttl time.Duration) *lru[V] {
	return &lru[V]{ttl: ttl, capacity: capacity, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru[V]) get(key string, now time.Time) (V, bool) {
	var zero V
	if c.ttl <= 0 {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return zero, false
	}
	e := el.Value.(*lruEntry[V])
	if !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, key)
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.val, true
}

func (c *lru[V]) put(key string, val V, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		e := el.Value.(*lruEntry[V])
		e.val, e.expires = val, now.Add(c.ttl)
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry[V]{key: key, val: val, expires: now.Add(c.ttl)})
	for c.order.Len() > c.capacity {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(*lruEntry[V]).key)
	}
}

// keyFingerprint identifies an API key without revealing it: a domain-separated SHA-256, cut to 64
// bits. Two tenants with different keys never share cache entries.
func keyFingerprint(key string) string {
	sum := sha256.Sum256([]byte(fingerprintDomain + key))
	return hex.EncodeToString(sum[:8])
}

// cacheKey identifies a request: the operation, the endpoint, the exact body sent and the key's
// fingerprint, hashed so that nothing of the request is readable from the key.
func cacheKey(op, endpoint string, body []byte, key string) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(op), []byte(endpoint), body, []byte(keyFingerprint(key))} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
