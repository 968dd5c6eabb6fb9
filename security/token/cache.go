package token

import (
	"context"
	"sync"
	"time"
)

// cacheMax bounds each state cache. A node with more live keys than this only loses hits.
const cacheMax = 100_000

// Cache is the in-memory cache of one kind of security state (users, token families,
// sessions), kept current by the change feed rather than by expiry: forget and set are called
// when a change is applied, and an entry also ends after cacheSafetyTTL.
//
// A load that raced with a change must not store what it read before the change: every forget
// and set bumps gen, and load stores its result only if gen did not move while it read.
//
// A nil *Cache caches nothing (load always reads): what a process without a change feed (the
// CLI, host tools) uses, since nothing would keep its entries current.
type Cache[V any] struct {
	now func() time.Time
	ttl time.Duration // cacheSafetyTTL unless the source has no change feed

	mu  sync.RWMutex
	gen uint64
	m   map[string]cacheItem[V]
}

type cacheItem[V any] struct {
	v  V
	at time.Time
}

// NewCache returns an empty cache whose entries live cacheSafetyTTL.
func NewCache[V any](now func() time.Time) *Cache[V] {
	return &Cache[V]{now: now, ttl: cacheSafetyTTL, m: map[string]cacheItem[V]{}}
}

// Get returns the cached value of key, if there is a fresh one.
func (c *Cache[V]) Get(key string) (V, bool) {
	if c == nil {
		var zero V
		return zero, false
	}
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if !ok || c.stale(e, c.now()) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *Cache[V]) stale(e cacheItem[V], now time.Time) bool {
	return now.Sub(e.at) >= c.ttl || now.Before(e.at)
}

// Load returns the cached value of key, or reads it with read and caches it unless a change was
// applied meanwhile.
func (c *Cache[V]) Load(ctx context.Context, key string, read func(ctx context.Context) (V, error)) (V, error) {
	if c == nil {
		return read(ctx)
	}
	if v, ok := c.Get(key); ok {
		return v, nil
	}
	c.mu.RLock()
	gen := c.gen
	c.mu.RUnlock()
	v, err := read(ctx)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.gen == gen {
		c.put(key, v)
	}
	c.mu.Unlock()
	return v, nil
}

// Generation is the change count a batch read starts from (putAll's gen); 0 without a cache.
func (c *Cache[V]) Generation() uint64 {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// PutAll caches the values of a batch read that started at generation gen, unless a change was
// applied meanwhile (load's rule for many keys).
func (c *Cache[V]) PutAll(gen uint64, vs map[string]V) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	for k, v := range vs {
		c.put(k, v)
	}
}

// Set stores v for key (a change this node knows the result of).
func (c *Cache[V]) Set(key string, v V) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.gen++
	c.put(key, v)
	c.mu.Unlock()
}

// put stores v; the caller holds mu. A full cache first drops stale entries, then an arbitrary
// quarter of the rest (Go's map order is random).
func (c *Cache[V]) put(key string, v V) {
	now := c.now()
	if len(c.m) >= cacheMax {
		for k, e := range c.m {
			if c.stale(e, now) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < cacheMax*3/4 {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[key] = cacheItem[V]{v: v, at: now}
}

// Forget drops key (a change whose result must be read again).
func (c *Cache[V]) Forget(key string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.gen++
	delete(c.m, key)
	c.mu.Unlock()
}
