package svc

import (
	"context"
	"errors"
	"net/http"

	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/security"
)

// pushBinder binds push connections to the security module's tokens: an opaque token to its
// session (kicked on revocation, rechecked by push), a JWT to its token family (kicked when the
// family is revoked), its issue time and its expiry. Its Recheck is the decision /api makes on
// every request (Sessions.Get, JWTTokens.Recheck), so a socket ends when its token stops
// working on /api. Push never imports security; this is the composition root's adapter.
type pushBinder struct {
	sessions *security.Sessions  // nil unless token_type is opaque_token
	jwt      *security.JWTTokens // nil unless the built-in JWT service
}

var _ push.Binder = pushBinder{}

// newPushBinder returns the binder of sec, or nil when a host token service leaves nothing to
// bind.
func newPushBinder(sec *security.Service) push.Binder {
	b := pushBinder{sessions: sec.Sessions()}
	b.jwt, _ = sec.Tokens().(*security.JWTTokens)
	if b.sessions == nil && b.jwt == nil {
		return nil
	}
	return b
}

// Bind implements push.Binder.
func (b pushBinder) Bind(_ context.Context, r *http.Request) push.Binding {
	token := security.BearerToken(r)
	if b.sessions != nil {
		return push.Binding{Key: security.SessionID(token), Session: true}
	}
	if info, ok := b.jwt.Inspect(token); ok {
		return push.Binding{Key: info.Family, IssuedAt: info.IssuedAt, Expires: info.Expires}
	}
	return push.Binding{}
}

// Recheck implements push.Binder: an opaque session through Sessions.Get (which does not slide
// the expiry), a JWT through JWTTokens.Recheck. A binding without an issue time (a token Inspect
// could not read, which cannot happen after the handshake authenticated it) is kept.
func (b pushBinder) Recheck(ctx context.Context, userID string, bind push.Binding) ([]string, bool, error) {
	if bind.Session {
		s, err := b.sessions.Get(ctx, bind.Key)
		if err != nil || s == nil || s.Principal == nil {
			return nil, s != nil, err
		}
		return s.Principal.Roles, true, nil
	}
	if b.jwt == nil || bind.IssuedAt.IsZero() {
		return nil, true, nil
	}
	roles, err := b.jwt.Recheck(ctx, userID, bind.Key, bind.IssuedAt)
	if errors.Is(err, security.ErrTokenInvalid) {
		return nil, false, nil
	}
	return roles, err == nil, err
}

// wirePush connects security's revocations and user changes to push: a revoked opaque session
// is kicked here and relayed to the other nodes; a revoked token family and a changed user
// (disabled, password, roles) reach every node through the security change feed, so each node
// kicks or rechecks its own connections.
func wirePush(sec *security.Service, p *push.Service) {
	if s := sec.Sessions(); s != nil {
		s.OnRevoke(func(ctx context.Context, r security.SessionRevocation) { p.Kick(ctx, r.SessionID) })
	}
	if jwt, ok := sec.Tokens().(*security.JWTTokens); ok {
		jwt.OnFamilyRevoked(func(fid string) { p.KickLocal(fid) })
	}
	sec.OnUserChanged(p.UserChanged)
}
