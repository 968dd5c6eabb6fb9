package security

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// hostStateTTL bounds how long a node trusts the TokenState of a host's TokenStateLoader,
// which has no change feed: a change there reaches the node within this time. The built-in
// store is not cached here: its own cache is kept current by the change feed.
const hostStateTTL = 5 * time.Second

// Family revocation reasons recorded in sys_security_token_family.revoke_reason.
const (
	revokeReuse  = "reuse"
	revokeLogout = "logout"
)

// stateCache answers "is a token issued at iat for this principal still good, and what are its
// roles now" from a TokenStateLoader. The built-in store answers from its change-fed cache; a
// host loader's answers are cached here for hostStateTTL.
type stateCache struct {
	loader  TokenStateLoader
	logger  *slog.Logger
	entries *stateMap[*TokenState] // host loaders only; nil *TokenState = unknown principal
}

func newStateCache(loader TokenStateLoader, now func() time.Time, logger *slog.Logger) *stateCache {
	s := &stateCache{loader: loader, logger: logger}
	if _, builtin := loader.(*Store); !builtin {
		s.entries = newStateMap[*TokenState](now)
		s.entries.ttl = hostStateTTL
	}
	return s
}

// check refuses a token issued before the principal's ValidAfter, or any token of a disabled
// principal, with 401/1003, and returns the principal's current roles (nil: keep the token's).
// Store errors fail open on access tokens (the signature was valid; an outage of the store must
// not log everyone out) and closed on refresh (strict).
func (s *stateCache) check(ctx context.Context, id string, iat time.Time, strict bool) ([]string, error) {
	if s == nil || s.loader == nil {
		return nil, nil
	}
	st, known, err := s.get(ctx, id, strict)
	if err != nil {
		if strict {
			return nil, err
		}
		s.logger.WarnContext(ctx, "token state unavailable, accepting the token", slog.Any("error", err))
		return nil, nil
	}
	if !known {
		return nil, nil
	}
	if st.Disabled || iat.Before(st.ValidAfter.Truncate(time.Second)) {
		return nil, ErrTokenInvalid
	}
	return st.Roles, nil
}

// get returns the principal's state; known is false when the loader does not know it. The state
// is returned by value: the built-in store's answer is read per request and needs no copy.
func (s *stateCache) get(ctx context.Context, id string, fresh bool) (st TokenState, known bool, err error) {
	if s.entries != nil && !fresh {
		if e, ok := s.entries.get(id); ok {
			if e == nil {
				return TokenState{}, false, nil
			}
			return *e, true, nil
		}
	}
	st, err = s.loader.TokenState(ctx, id)
	switch {
	case errors.Is(err, ErrUserNotFound):
		err = nil
	case err != nil:
		return TokenState{}, false, err
	default:
		known = true
	}
	if s.entries != nil {
		var e *TokenState
		if known {
			e = &st
		}
		s.entries.set(id, e)
	}
	return st, known, nil
}

// invalidate forgets a principal's cached state (the built-in store calls it on change).
func (s *stateCache) invalidate(id string) {
	if s != nil && s.entries != nil {
		s.entries.forget(id)
	}
}

// withRoles returns roles as the principal's roles: a copy, never nil.
func withRoles(roles []string) []string {
	if roles == nil {
		return []string{}
	}
	return slices.Clone(roles)
}

func date(t time.Time) *jwt.NumericDate { return jwt.NewNumericDate(t) }
