package security

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// memorySweepEvery is how often (on the injected clock) the memory stores drop expired entries.
const memorySweepEvery = time.Minute

// nonceStore remembers used nonces of signed requests for their TTL: in memory on one node, in
// Redis when svc.kvstore.enabled (a nonce used on one node is refused on every other).
type nonceStore interface {
	// use records key until now + ttl and reports whether it was unused.
	use(ctx context.Context, key string, ttl time.Duration, now time.Time) (bool, error)
}

// memoryNonces is the single-node nonceStore.
type memoryNonces struct {
	mu        sync.Mutex
	until     map[string]time.Time
	nextSweep time.Time
}

var _ nonceStore = (*memoryNonces)(nil)

func newMemoryNonces() *memoryNonces { return &memoryNonces{until: map[string]time.Time{}} }

func (m *memoryNonces) use(_ context.Context, key string, ttl time.Duration, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !now.Before(m.nextSweep) {
		for k, t := range m.until {
			if !now.Before(t) {
				delete(m.until, k)
			}
		}
		m.nextSweep = now.Add(memorySweepEvery)
	}
	if t, ok := m.until[key]; ok && now.Before(t) {
		return false, nil
	}
	m.until[key] = now.Add(ttl)
	return true, nil
}

// redisNonces is the nonceStore shared by every node: SET NX with the TTL, keys
// svc:trust:<app>:nonce:<key>.
type redisNonces struct {
	client *redis.Client
	prefix string
}

var _ nonceStore = (*redisNonces)(nil)

func (r *redisNonces) use(ctx context.Context, key string, ttl time.Duration, _ time.Time) (bool, error) {
	ok, err := r.client.SetNX(ctx, r.prefix+key, "1", ttl).Result()
	if err != nil {
		return false, fmt.Errorf("security: trust nonce: %w", err)
	}
	return ok, nil
}
