package token

import (
	"maps"
	"slices"
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
	principal *rpc.Principal // never handed out: copyPrincipal
	family    string
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

// copyPrincipal returns a deep copy of the cached principal (issue #12): a handler that
// changes its Principal, its Roles or its Details cannot affect any other request of the token.
func (v verifiedToken) copyPrincipal() *rpc.Principal { return ClonePrincipal(v.principal) }

// principalWith is copyPrincipal with the principal's current roles when the store keeps them
// (roles not nil), copied once.
func (v verifiedToken) principalWith(roles []string) *rpc.Principal {
	if roles == nil {
		return v.copyPrincipal()
	}
	c := *v.principal
	c.Roles = slices.Clone(roles)
	c.Details = cloneJSON(v.principal.Details)
	return &c
}

// ClonePrincipal returns a copy of p that shares nothing mutable with it: the roles slice and
// the JSON-shaped details (maps and slices, nested) are copied.
func ClonePrincipal(p *rpc.Principal) *rpc.Principal {
	if p == nil {
		return nil
	}
	c := *p
	if p.Roles != nil {
		c.Roles = slices.Clone(p.Roles)
	}
	c.Details = cloneJSON(p.Details)
	return &c
}

// cloneJSON deep-copies the maps and slices of a decoded JSON value; other values are
// immutable or are returned as they are.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneJSON(e)
		}
		return s
	case []string:
		return slices.Clone(x)
	case map[string]string:
		return maps.Clone(x)
	}
	return v
}
