package svc

import (
	"context"
	"net/http"

	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/security"
)

// pushBinder binds push connections to the security module's tokens: an opaque token to its
// session (kicked on revocation, rechecked by push), a JWT to its token family (kicked when the
// family is revoked) and its expiry. Push never imports security; this is the composition
// root's adapter.
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
	if fid, exp, ok := b.jwt.Inspect(token); ok {
		return push.Binding{Key: fid, Expires: exp}
	}
	return push.Binding{}
}

// Live implements push.Binder: Sessions.Get, which does not slide the expiry.
func (b pushBinder) Live(ctx context.Context, id string) (bool, error) {
	if b.sessions == nil {
		return true, nil
	}
	s, err := b.sessions.Get(ctx, id)
	return s != nil, err
}

// wirePush connects security's revocations to push's kicks: a revoked opaque session is kicked
// here and relayed to the other nodes; a revoked token family reaches every node through the
// security change feed, so each node kicks its own connections.
func wirePush(sec *security.Service, p *push.Service) {
	if s := sec.Sessions(); s != nil {
		s.OnRevoke(func(ctx context.Context, r security.SessionRevocation) { p.Kick(ctx, r.SessionID) })
	}
	if jwt, ok := sec.Tokens().(*security.JWTTokens); ok {
		jwt.OnFamilyRevoked(func(fid string) { p.KickLocal(fid) })
	}
}
