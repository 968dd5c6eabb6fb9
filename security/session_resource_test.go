package security_test

import (
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// sessionCall calls security/session with a bearer token.
func (e *env) sessionCall(t *testing.T, token, action string, params any) svctest.Response {
	t.Helper()
	return e.srv.Call(t, security.ResourceSession, action, params, svctest.WithToken(token))
}

// listSessions answers list for userID, failing the test unless it succeeds.
func (e *env) listSessions(t *testing.T, token, userID string) security.SessionList {
	t.Helper()
	r := e.sessionCall(t, token, "list", map[string]any{"userId": userID})
	want(t, r, 200, 0)
	var l security.SessionList
	r.DataAs(t, &l)
	return l
}

// TestSessionResource lists and revokes logins through security/session: token families with
// jwt_token on every database, opaque sessions on every database and on Redis. Each run checks
// the listing (kind, client, times, the caller's own login marked current), that a revoked
// login's tokens are refused at once while the user's other logins keep working, "sign out
// everywhere", the 2001 of an unknown or spent id, and the permission refusals.
func TestSessionResource(t *testing.T) {
	run := func(t *testing.T, b backend, tokenType config.TokenType) {
		log := &svctest.Audits{}
		e := newEnv(t, append(b.options(t), withAudit(log), withCfg(func(c *config.Config) {
			c.Security.TokenType = tokenType
			c.Security.RefreshNotBefore = time.Second
		}))...)
		sessionResourceScenario(t, e, log, tokenType)
	}
	// token families live in the primary database only; Redis holds opaque sessions
	t.Run("jwt_token", func(t *testing.T) {
		svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) { run(t, backend{kind: kind}, config.TokenTypeJWT) })
	})
	t.Run("opaque_token", func(t *testing.T) {
		eachBackend(t, func(t *testing.T, b backend) { run(t, b, config.TokenTypeOpaque) })
	})
}

func sessionResourceScenario(t *testing.T, e *env, log *svctest.Audits, tokenType config.TokenType) {
	root := e.addUser(t, "root", "root-password", "admin")
	sam := e.addUser(t, "sam", "sam-password")
	e.addUser(t, "viewer", "viewer-password", "viewer")
	admin := e.login(t, "root", "root-password")
	viewer := e.login(t, "viewer", "viewer-password").AccessToken
	first := e.login(t, "sam", "sam-password")
	e.clock.Advance(time.Second)
	second := e.login(t, "sam", "sam-password")
	wantKind := security.SessionKindFamily
	if tokenType == config.TokenTypeOpaque {
		wantKind = security.SessionKindSession
	}

	for _, action := range []string{"list", "revoke_user"} {
		want(t, e.sessionCall(t, viewer, action, map[string]any{"userId": sam.ID}), 403, rpc.CodeAccessDenied)
	}
	want(t, e.sessionCall(t, viewer, "revoke", map[string]any{"id": "x"}), 403, rpc.CodeAccessDenied)
	want(t, e.sessionCall(t, first.AccessToken, "list", map[string]any{"userId": sam.ID}), 403, rpc.CodeAccessDenied)

	l := e.listSessions(t, admin.AccessToken, sam.ID)
	if l.TokenType != string(tokenType) || len(l.Items) != 2 {
		t.Fatalf("list = %+v, want 2 logins of %s", l, tokenType)
	}
	for _, s := range l.Items {
		if s.Kind != wantKind || s.UserID != sam.ID || s.ClientIP == "" || s.Current || s.CreatedAt.IsZero() ||
			!s.ExpiresAt.After(e.clock.Now()) || (s.MaxExpiresAt != nil) != (tokenType == config.TokenTypeOpaque) {
			t.Errorf("session %+v", s)
		}
	}
	if !l.Items[0].CreatedAt.Before(l.Items[1].CreatedAt) {
		t.Errorf("not oldest first: %v, %v", l.Items[0].CreatedAt, l.Items[1].CreatedAt)
	}
	own := e.listSessions(t, admin.AccessToken, root.ID)
	if len(own.Items) != 1 || !own.Items[0].Current {
		t.Errorf("own logins = %+v, want one marked current", own.Items)
	}

	// revoke the older login: its tokens stop at once, the newer one keeps working
	want(t, e.sessionCall(t, admin.AccessToken, "revoke", map[string]any{"id": l.Items[0].ID}), 200, 0)
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(first.AccessToken)), 401, rpc.CodeTokenInvalid)
	if tokenType == config.TokenTypeJWT {
		e.clock.Advance(time.Second) // past refresh_not_before: the refusal is the revocation's
		want(t, e.call(t, "refresh", map[string]any{"refreshToken": first.RefreshToken}), 401, rpc.CodeTokenInvalid)
	}
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(second.AccessToken)), 200, 0)
	want(t, e.sessionCall(t, admin.AccessToken, "revoke", map[string]any{"id": l.Items[0].ID}), 200, rpc.CodeRecordNotFound)
	want(t, e.sessionCall(t, admin.AccessToken, "revoke", map[string]any{"id": "no-such-login"}), 200, rpc.CodeRecordNotFound)
	if left := e.listSessions(t, admin.AccessToken, sam.ID); len(left.Items) != 1 || left.Items[0].ID != l.Items[1].ID {
		t.Errorf("after revoke: %+v", l.Items)
	}
	if rec, ok := log.Last(security.ResourceSession, "revoke"); !ok || rec.Principal == nil || rec.Principal.ID != root.ID {
		t.Errorf("audit record of revoke = %+v, %v", rec, ok)
	}

	// sign out everywhere
	third := e.login(t, "sam", "sam-password")
	r := e.sessionCall(t, admin.AccessToken, "revoke_user", map[string]any{"userId": sam.ID})
	want(t, r, 200, 0)
	var n security.RevokedCount
	r.DataAs(t, &n)
	if n.Revoked != 2 {
		t.Errorf("revoke_user revoked %d, want 2", n.Revoked)
	}
	for _, tok := range []string{second.AccessToken, third.AccessToken} {
		want(t, e.call(t, "get_user_info", nil, svctest.WithToken(tok)), 401, rpc.CodeTokenInvalid)
	}
	if l := e.listSessions(t, admin.AccessToken, sam.ID); len(l.Items) != 0 {
		t.Errorf("after revoke_user: %+v", l.Items)
	}
	if _, ok := log.Last(security.ResourceSession, "revoke_user"); !ok {
		t.Error("no audit record of revoke_user")
	}
	e.login(t, "sam", "sam-password") // a new login works
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(admin.AccessToken)), 200, 0)
}

// TestSessionResourceHostTokens: with a host token service security/session has no operations.
func TestSessionResourceHostTokens(t *testing.T) {
	e := newEnv(t)
	want(t, e.sessionCall(t, "", "list", map[string]any{"userId": "u"}), 401, rpc.CodeUnauthenticated)
	h := newEnv(t, withSec(func(o *security.Options) { o.Tokens = hostTokens{e.sec.Tokens()} }))
	want(t, h.sessionCall(t, "", "list", map[string]any{"userId": "u"}), 404, rpc.CodeNotFound)
}

// hostTokens stands for a host's own token service.
type hostTokens struct{ security.TokenService }
