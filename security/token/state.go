package token

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/svc-framework/svc/config"
)

// hostStateTTL bounds how long a node trusts the TokenState of a host's TokenStateLoader,
// which has no change feed: a change there reaches the node within this time. The built-in
// store is not cached here: its own cache is kept current by the change feed.
const hostStateTTL = 5 * time.Second

// Family revocation reasons recorded in sys_security_token_family.revoke_reason.
const (
	revokeReuse  = "reuse"
	revokeLogout = "logout"
	revokeForced = "forced" // security/session (RevokeFamily)
)

// State answers "is a token issued at iat for this principal still good, and what are its
// roles now" from a TokenStateLoader. The built-in store answers from its change-fed cache; a
// host loader's answers are cached here for hostStateTTL.
type State struct {
	loader  TokenStateLoader
	logger  *slog.Logger
	entries *Cache[*TokenState] // host loaders only; nil *TokenState = unknown principal
	// failClosed: svc.security.revocation.fail_mode = closed; a store error refuses access
	// tokens too (ErrRevocationUnavailable) instead of accepting them.
	failClosed bool
}

// NewState returns the token state over loader. cached says that loader keeps its own cache
// current through the change feed (the built-in user store); any other loader's answers are
// cached here for hostStateTTL. cfg is svc.security.revocation (fail_mode).
func NewState(loader TokenStateLoader, cached bool, cfg config.Revocation, now func() time.Time, logger *slog.Logger) *State {
	s := &State{loader: loader, logger: logger, failClosed: cfg.FailMode == config.RevocationFailClosed}
	if !cached {
		s.entries = NewCache[*TokenState](now)
		s.entries.ttl = hostStateTTL
	}
	return s
}

// Check refuses a token whose login was at or before the principal's ValidAfter, or any token
// of a disabled principal, with 401/1003, and returns the principal's current roles (nil: keep the token's).
// Store errors fail open on access tokens (the signature was valid; an outage of the store must
// not log everyone out) and closed on refresh (strict).
//
// login is the instant of the login the token or session descends from (issue #42): a JWT's
// lat claim (µs; its iat for a token without one), an opaque session's creation time (µs in
// the database, ms in Redis), a challenge token's lat. Every store time is truncated to the
// microsecond before it is written (NewStore, Sessions.create), so ValidAfter is exact: a login
// before the change is at or before it, and refused, whatever the second it fell in — never
// "the same second, so still good". A login in the same microsecond as the change (the same
// millisecond for Redis sessions, the same second for a token without lat) is refused too.
func (s *State) Check(ctx context.Context, id string, login time.Time, strict bool) ([]string, error) {
	if s == nil || s.loader == nil {
		return nil, nil
	}
	st, known, err := s.get(ctx, id, strict)
	if err != nil {
		if strict {
			return nil, err
		}
		if s.failClosed {
			return nil, ErrRevocationUnavailable.Wrap(err)
		}
		s.logger.WarnContext(ctx, "token state unavailable, accepting the token", slog.Any("error", err))
		return nil, nil
	}
	if !known {
		return nil, nil
	}
	if st.Disabled || !login.After(st.ValidAfter) {
		return nil, ErrTokenInvalid
	}
	return st.Roles, nil
}

// LoginTime is the instant to record for a login of principal id made now, at the precision
// unit its store keeps: now, or — when the principal's ValidAfter is not before now at that
// precision, because a password change this very login observed (the password_change
// challenge) happened in the same unit — the first instant after ValidAfter. A login stamped so
// read the change before it was issued, so it is not one the change must end; without the step
// the check above would refuse the tokens of a login that changed the password in the same
// microsecond (a frozen test clock, a coarse one). Store errors and unknown principals leave now.
func (s *State) LoginTime(ctx context.Context, id string, now time.Time, unit time.Duration) time.Time {
	now = now.Truncate(unit)
	if s == nil || s.loader == nil {
		return now
	}
	st, known, err := s.get(ctx, id, true)
	if err != nil || !known || now.After(st.ValidAfter) {
		return now
	}
	return st.ValidAfter.Truncate(unit).Add(unit)
}

// get returns the principal's state; known is false when the loader does not know it. The state
// is returned by value: the built-in store's answer is read per request and needs no copy.
func (s *State) get(ctx context.Context, id string, fresh bool) (st TokenState, known bool, err error) {
	if s.entries != nil && !fresh {
		if e, ok := s.entries.Get(id); ok {
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
		s.entries.Set(id, e)
	}
	return st, known, nil
}

// Invalidate forgets a principal's cached state (the built-in store calls it on change).
func (s *State) Invalidate(id string) {
	if s != nil && s.entries != nil {
		s.entries.Forget(id)
	}
}

// WithRoles returns roles as the principal's roles: a copy, never nil.
func WithRoles(roles []string) []string {
	if roles == nil {
		return []string{}
	}
	return slices.Clone(roles)
}

func date(t time.Time) *jwt.NumericDate { return jwt.NewNumericDate(t) }
