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
// gives none); the bounds keep a long-running gateway from growing without limit (the reference
// used an unbounded map). The byte budget matters for extracts: one can be megabytes, so a bound
// on entries alone would let 256 of them hold gigabytes.
const (
	DefaultCacheTTL   = config.DefaultWebCacheTTL
	cacheCapacity     = 256
	cacheMaxBytes     = 32 << 20 // per cache, counted as the text the entries hold
	settingCacheTTL   = "tools.web.search.cacheTtlMinutes"
	settingMaxResults = "tools.web.search.maxResults"
	fingerprintDomain = "nodmix/tavily/api-key-fingerprint\x00"
)

// lru is a least-recently-used cache with a TTL per entry, bounded by its number of entries and by
// the sum of their sizes. A zero or negative TTL disables it. It is safe for concurrent use; values
// are shared with callers, who must not modify them.
type lru[V any] struct {
	ttl      time.Duration
	capacity int
	maxBytes int

	mu    sync.Mutex
	size  int        // sum of the entries' sizes
	order *list.List // front = most recently used; elements hold *lruEntry[V]
	items map[string]*list.Element
}

type lruEntry[V any] struct {
	key     string
	val     V
	size    int
	expires time.Time
}

func newLRU[V any](capacity, maxBytes int, ttl time.Duration) *lru[V] {
	return &lru[V]{ttl: ttl, capacity: capacity, maxBytes: maxBytes, order: list.New(), items: map[string]*list.Element{}}
}

// removeLocked drops el from the cache.
func (c *lru[V]) removeLocked(el *list.Element) {
	e := el.Value.(*lruEntry[V])
	c.order.Remove(el)
	delete(c.items, e.key)
	c.size -= e.size
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
		c.removeLocked(el)
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.val, true
}

// put stores val, whose size is about the bytes it holds. A value larger than the whole byte
// budget is not cached.
func (c *lru[V]) put(key string, val V, size int, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.removeLocked(el)
	}
	if size > c.maxBytes {
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry[V]{key: key, val: val, size: size, expires: now.Add(c.ttl)})
	c.size += size
	for c.order.Len() > c.capacity || c.size > c.maxBytes {
		c.removeLocked(c.order.Back())
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
