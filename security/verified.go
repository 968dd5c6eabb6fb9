package security

import (
	"sync"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// verifiedMax bounds the verified-token cache. A node serving more distinct live tokens than
// this only loses hits, never correctness.
const verifiedMax = 16384

// verifiedCache remembers access tokens whose signature, issuer, audience and type were
// verified, until they expire. Those properties cannot change for a given token string, so a
// hit skips the JSON decoding and the HMAC that dominate the bearer path (about three quarters
// of a verification); expiry is still checked on every hit, and the caller still runs the
// principal's token-state check (password change, disable), so nothing that can revoke a JWT is
// bypassed.
type verifiedCache struct {
	mu sync.RWMutex
	m  map[string]verifiedToken
}

type verifiedToken struct {
	principal *rpc.Principal
	issuedAt  time.Time
	expires   time.Time
}

func newVerifiedCache() *verifiedCache {
	return &verifiedCache{m: make(map[string]verifiedToken)}
}

// get returns the cached verification of token, if any.
func (c *verifiedCache) get(token string) (verifiedToken, bool) {
	c.mu.RLock()
	v, ok := c.m[token]
	c.mu.RUnlock()
	return v, ok
}

// put records a verified token. When the cache is full it first drops expired entries, then an
// arbitrary quarter of the rest (Go's map order is random), so memory stays bounded under any
// number of distinct tokens.
func (c *verifiedCache) put(token string, v verifiedToken, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= verifiedMax {
		for k, e := range c.m {
			if now.After(e.expires) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < verifiedMax*3/4 {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[token] = v
}

// drop forgets token (it expired).
func (c *verifiedCache) drop(token string) {
	c.mu.Lock()
	delete(c.m, token)
	c.mu.Unlock()
}

// copyPrincipal returns a copy of the cached principal, so a handler that changes its Principal
// value cannot affect later requests.
func (v verifiedToken) copyPrincipal() *rpc.Principal {
	p := *v.principal
	return &p
}
