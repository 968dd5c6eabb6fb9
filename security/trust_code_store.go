package security

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/rpc"
)

// trustCode is what a one-time trust-login code stands for. Stores key it by the code's hash;
// the code itself is never stored.
// memorySweepEvery is how often (on the injected clock) the memory code store drops expired
// entries.
const memorySweepEvery = time.Minute

type trustCode struct {
	AppID     string         `json:"app"`
	Principal *rpc.Principal `json:"principal"`
	// UserAgent is the hash of the gateway request's User-Agent (bind_user_agent).
	UserAgent string `json:"ua"`
	// ClientIP is the gateway request's client IP (bind_client_ip).
	ClientIP  string    `json:"ip"`
	ExpiresAt time.Time `json:"exp"`
}

// codeStore keeps one-time codes: in memory on one node, in Redis when svc.kvstore.enabled (a
// code issued on one node is exchangeable on any node, once).
type codeStore interface {
	// put stores c under key until its expiry.
	put(ctx context.Context, key string, c trustCode, now time.Time) error
	// take removes and returns the code under key, or nil when there is none; of racing takes
	// exactly one gets it. Expiry is the caller's check.
	take(ctx context.Context, key string) (*trustCode, error)
}

// memoryCodes is the single-node codeStore.
type memoryCodes struct {
	mu        sync.Mutex
	codes     map[string]trustCode
	nextSweep time.Time
}

var _ codeStore = (*memoryCodes)(nil)

func newMemoryCodes() *memoryCodes { return &memoryCodes{codes: map[string]trustCode{}} }

func (m *memoryCodes) put(_ context.Context, key string, c trustCode, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !now.Before(m.nextSweep) {
		for k, v := range m.codes {
			if !now.Before(v.ExpiresAt) {
				delete(m.codes, k)
			}
		}
		m.nextSweep = now.Add(memorySweepEvery)
	}
	m.codes[key] = c
	return nil
}

func (m *memoryCodes) take(_ context.Context, key string) (*trustCode, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.codes[key]
	if !ok {
		return nil, nil
	}
	delete(m.codes, key)
	return &c, nil
}

// redisCodes is the codeStore shared by every node: a JSON value under
// svc:trust:<app>:code:<hash>, taken with GETDEL (Redis 6.2 or later).
type redisCodes struct {
	client *redis.Client
	prefix string
}

var _ codeStore = (*redisCodes)(nil)

func (r *redisCodes) put(ctx context.Context, key string, c trustCode, now time.Time) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("security: trust code: %w", err)
	}
	if err := r.client.Set(ctx, r.prefix+key, b, c.ExpiresAt.Sub(now)+redisKeyMargin).Err(); err != nil {
		return fmt.Errorf("security: trust code: %w", err)
	}
	return nil
}

func (r *redisCodes) take(ctx context.Context, key string) (*trustCode, error) {
	b, err := r.client.GetDel(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("security: trust code: %w", err)
	}
	var c trustCode
	if err := json.Unmarshal(b, &c); err != nil || c.Principal == nil {
		return nil, nil // unreadable: as good as absent
	}
	return &c, nil
}

// trustCodeAuthenticator is login type trust_code (wire-core §5.9, leg 2): principal is the app
// id, credentials the code as a JSON string. The code is spent by the first attempt whatever its
// outcome, so a code presented by another app, browser or address dies with the attempt. Every
// failure is 401/1063; the login handler exempts the type from lockout.
type trustCodeAuthenticator struct {
	codes  codeStore
	now    func() time.Time
	bindUA bool
	bindIP bool
}

var _ Authenticator = (*trustCodeAuthenticator)(nil)

// Authenticate implements Authenticator.
func (a *trustCodeAuthenticator) Authenticate(ctx context.Context, req LoginRequest) (*rpc.Principal, error) {
	var code string
	if err := json.Unmarshal(req.Credentials, &code); err != nil || !wellFormedOpaque(code) {
		return nil, ErrTrustCodeInvalid
	}
	c, err := a.codes.take(ctx, digest(code))
	if err != nil {
		return nil, err
	}
	switch {
	case c == nil, !a.now().Before(c.ExpiresAt), c.AppID != req.Identifier:
		return nil, ErrTrustCodeInvalid
	case a.bindUA && c.UserAgent != userAgentHash(req.Request):
		return nil, ErrTrustCodeInvalid
	case a.bindIP && c.ClientIP != req.ClientIP:
		return nil, ErrTrustCodeInvalid
	}
	return c.Principal, nil
}
