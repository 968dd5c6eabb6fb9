package integration

import (
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
	"github.com/svc-framework/svc/config"
)

// scriptCacheMaxValue bounds one value's JSON; cacheEntryOverhead is what an entry costs beyond
// its key and value (list element, map slot, expiry), charged so that many tiny entries count.
const (
	scriptCacheMaxValue = 1 << 20
	cacheEntryOverhead  = 64
)

// scriptCache backs the cache binding: one in-process store shared by every run, values kept
// as JSON so no script object outlives its runtime (issue #31 item 12). Every entry expires
// (at most svc.integration.script_cache.ttl after its set, by the injected clock) and all
// entries together hold at most max_bytes: a set over the cap evicts the least recently used
// entries. Those bytes are the cache's own budget, not the scripts': the heap watchdog
// subtracts them from the heap it judges.
type scriptCache struct {
	clock    func() time.Time
	maxBytes int64
	ttl      time.Duration

	mu    sync.Mutex
	items map[string]*list.Element // of *cacheItem
	lru   list.List                // front: most recently used
	size  atomic.Int64             // bytes held, read by the watchdog without the lock
}

type cacheItem struct {
	key, value string
	expires    time.Time
}

func (it *cacheItem) bytes() int64 { return int64(len(it.key)+len(it.value)) + cacheEntryOverhead }

func newScriptCache(cfg config.ScriptCache, clock func() time.Time) *scriptCache {
	c := &scriptCache{clock: clock, maxBytes: int64(cfg.MaxBytes), ttl: cfg.TTL, items: map[string]*list.Element{}}
	if c.maxBytes <= 0 {
		c.maxBytes = 32 << 20
	}
	if c.ttl <= 0 {
		c.ttl = time.Hour
	}
	return c
}

// bytes is what the entries hold now.
func (c *scriptCache) bytes() uint64 { return uint64(c.size.Load()) }

func (c *scriptCache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return "", false
	}
	it := el.Value.(*cacheItem)
	if !c.clock().Before(it.expires) {
		c.remove(el)
		return "", false
	}
	c.lru.MoveToFront(el)
	return it.value, true
}

// set stores value under key for ttl (0 or longer than the cache's: the cache's), evicting the
// least recently used entries while the total is over the cap.
func (c *scriptCache) set(key, value string, ttl time.Duration) error {
	it := &cacheItem{key: key, value: value}
	switch {
	case len(value) > scriptCacheMaxValue:
		return fmt.Errorf("cache.set: value over %d bytes", scriptCacheMaxValue)
	case it.bytes() > c.maxBytes:
		return fmt.Errorf("cache.set: entry over the cache's %d bytes", c.maxBytes)
	}
	if ttl <= 0 || ttl > c.ttl {
		ttl = c.ttl
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	it.expires = c.clock().Add(ttl)
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	c.items[key] = c.lru.PushFront(it)
	c.size.Add(it.bytes())
	for c.size.Load() > c.maxBytes {
		c.remove(c.lru.Back())
	}
	return nil
}

func (c *scriptCache) delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
}

// remove drops el; the caller holds mu.
func (c *scriptCache) remove(el *list.Element) {
	it := c.lru.Remove(el).(*cacheItem)
	delete(c.items, it.key)
	c.size.Add(-it.bytes())
}

// cacheLib is cache: get(key) (undefined when absent), set(key, value, ttlMs?), has, delete.
func (r *run) cacheLib() goja.Value {
	c := r.e.cache
	o := r.vm.NewObject()
	o.Set("get", func(key string) goja.Value {
		v, ok := c.get(key)
		if !ok {
			return goja.Undefined()
		}
		return r.fromJSON([]byte(v))
	})
	o.Set("has", func(key string) bool { _, ok := c.get(key); return ok })
	o.Set("delete", func(key string) { c.delete(key) })
	o.Set("set", func(key string, v goja.Value, ttl goja.Value) {
		raw, err := r.toJSON(v)
		if err == nil && !json.Valid(raw) {
			err = errors.New("cache.set: value is not JSON")
		}
		if err == nil {
			var ms int64
			if ttl != nil && !goja.IsUndefined(ttl) && !goja.IsNull(ttl) {
				ms = ttl.ToInteger()
			}
			err = c.set(key, string(raw), time.Duration(ms)*time.Millisecond)
		}
		if err != nil {
			panic(r.vm.NewTypeError(err.Error()))
		}
	})
	return o
}
