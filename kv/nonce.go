package kv

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// nonceSweepEvery is how often (on the caller's clock) the memory store drops expired nonces.
const nonceSweepEvery = time.Minute

// NonceStore remembers the used nonces of signed requests for their TTL, so a replayed
// request is refused: in memory on one node (NewMemoryNonces), in Redis when svc.kvstore is
// enabled (NewRedisNonces: a nonce used on one node is refused on every other). The security
// module's trust-login gateway and the integration module's inbound signature scheme use it.
type NonceStore interface {
	// Use records key until now + ttl and reports whether it was unused.
	Use(ctx context.Context, key string, ttl time.Duration, now time.Time) (bool, error)
}

// memoryNonces is the single-node NonceStore.
type memoryNonces struct {
	mu        sync.Mutex
	until     map[string]time.Time
	nextSweep time.Time
}

var _ NonceStore = (*memoryNonces)(nil)

// NewMemoryNonces returns a NonceStore of this process.
func NewMemoryNonces() NonceStore { return &memoryNonces{until: map[string]time.Time{}} }

func (m *memoryNonces) Use(_ context.Context, key string, ttl time.Duration, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !now.Before(m.nextSweep) {
		for k, t := range m.until {
			if !now.Before(t) {
				delete(m.until, k)
			}
		}
		m.nextSweep = now.Add(nonceSweepEvery)
	}
	if t, ok := m.until[key]; ok && now.Before(t) {
		return false, nil
	}
	m.until[key] = now.Add(ttl)
	return true, nil
}

// redisNonces is the NonceStore shared by every node: SET NX with the TTL under prefix + key.
type redisNonces struct {
	client *redis.Client
	prefix string
}

var _ NonceStore = (*redisNonces)(nil)

// NewRedisNonces returns a NonceStore in Redis, keys prefix + key.
func NewRedisNonces(client *redis.Client, prefix string) NonceStore {
	return &redisNonces{client: client, prefix: prefix}
}

func (r *redisNonces) Use(ctx context.Context, key string, ttl time.Duration, _ time.Time) (bool, error) {
	ok, err := r.client.SetNX(ctx, r.prefix+key, "1", ttl).Result()
	if err != nil {
		return false, fmt.Errorf("nonce store: %w", err)
	}
	return ok, nil
}
