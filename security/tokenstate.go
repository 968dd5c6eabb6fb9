package security

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// stateCacheTTL bounds how long a node trusts a principal's TokenState before asking the store
// again: a password change or disable made on another node (or by the CLI) refuses old access
// tokens everywhere within this time; on the node that made it, at once.
const stateCacheTTL = 5 * time.Second

// Family revocation reasons recorded in sys_security_token_family.revoke_reason.
const (
	revokeReuse  = "reuse"
	revokeLogout = "logout"
)

// stateCache answers "is a token issued at iat for this principal still good" from a
// TokenStateLoader, with a short per-node cache so the bearer strategy does not hit the
// database on every request.
type stateCache struct {
	loader TokenStateLoader
	now    func() time.Time
	logger *slog.Logger

	mu      sync.RWMutex // read-locked on every bearer request, write-locked on a miss
	entries map[string]stateEntry
}

type stateEntry struct {
	state   TokenState
	known   bool
	fetched time.Time
}

func newStateCache(loader TokenStateLoader, now func() time.Time, logger *slog.Logger) *stateCache {
	return &stateCache{loader: loader, now: now, logger: logger, entries: map[string]stateEntry{}}
}

// check refuses a token issued before the principal's ValidAfter, or any token of a disabled
// principal, with 401/1003. Store errors fail open on access tokens (the signature was valid;
// an outage of the store must not log everyone out) and closed on refresh (strict).
func (s *stateCache) check(ctx context.Context, id string, iat time.Time, strict bool) error {
	if s == nil || s.loader == nil {
		return nil
	}
	e, err := s.get(ctx, id, strict)
	if err != nil {
		if strict {
			return err
		}
		s.logger.WarnContext(ctx, "token state unavailable, accepting the token", slog.Any("error", err))
		return nil
	}
	if !e.known {
		return nil
	}
	if e.state.Disabled || iat.Before(e.state.ValidAfter.Truncate(time.Second)) {
		return ErrTokenInvalid
	}
	return nil
}

func (s *stateCache) get(ctx context.Context, id string, fresh bool) (stateEntry, error) {
	now := s.now()
	s.mu.RLock()
	e, ok := s.entries[id]
	s.mu.RUnlock()
	if ok && !fresh && now.Sub(e.fetched) < stateCacheTTL && !now.Before(e.fetched) {
		return e, nil
	}
	st, err := s.loader.TokenState(ctx, id)
	switch {
	case errors.Is(err, ErrUserNotFound):
		e = stateEntry{fetched: now}
	case err != nil:
		return stateEntry{}, err
	default:
		e = stateEntry{state: st, known: true, fetched: now}
	}
	s.mu.Lock()
	if len(s.entries) > 100_000 { // bound memory: start over rather than grow without limit
		s.entries = map[string]stateEntry{}
	}
	s.entries[id] = e
	s.mu.Unlock()
	return e, nil
}

// invalidate forgets a principal's cached state (called by the built-in store on change).
func (s *stateCache) invalidate(id string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	delete(s.entries, id)
	s.mu.Unlock()
}

func date(t time.Time) *jwt.NumericDate { return jwt.NewNumericDate(t) }
