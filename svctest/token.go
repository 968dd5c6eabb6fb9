package svctest

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
)

// QueryAccessToken is the query parameter that carries an access token where no header can
// (WebSocket and /mcp clients of browsers): "__accessToken".
const QueryAccessToken = security.QueryAccessToken

// ResourceAuth is the security module's authentication resource, "security/auth" (login,
// logout, get_user_info, …), for Call.
const ResourceAuth = security.ResourceAuth

// SessionID is the session key of token (an opaque token's session, a JWT's token family): the
// id a revocation or a relayed kick names.
func SessionID(token string) string { return security.SessionID(token) }

// WithCheapHashing makes password hashes cost almost nothing (argon2id with 256 KiB, one pass),
// for tests that create and sign in many users.
func WithCheapHashing() Option {
	return WithOptions(svc.WithSecurity(security.Options{Hash: security.HashParams{Memory: 256, Time: 1, Threads: 1}}))
}

// Token mints an access token for p that the server accepts (signed with the server's secret,
// issued at the server's current time).
func (s *Server) Token(t testing.TB, p *rpc.Principal) string {
	t.Helper()
	return MintToken(t, s.cfg, p, s.now())
}

// MintToken mints an access token for p signed with cfg's secret, issued at now: for servers
// svctest did not start (a child process, a foreign secret).
func MintToken(t testing.TB, cfg *config.Config, p *rpc.Principal, now time.Time) string {
	t.Helper()
	tok, err := security.MintAccessToken(cfg, p, now)
	if err != nil {
		t.Fatalf("svctest: mint token: %v", err)
	}
	return tok
}

// Login signs user in with password over /api (security/auth login, type password) and returns
// the access token; the test fails when the login does.
func (s *Server) Login(t testing.TB, user, password string) string {
	t.Helper()
	r := s.Call(t, security.ResourceAuth, "login", map[string]any{"type": "password", "principal": user, "credentials": password})
	var res security.LoginResult
	r.DataAs(t, &res)
	if r.Code != 0 || res.Tokens == nil {
		t.Fatalf("svctest: login %s: %d %s", user, r.Code, r.Message)
	}
	return res.Tokens.AccessToken
}

// Logout signs token's session out over /api (security/auth logout); the test fails when the
// call does.
func (s *Server) Logout(t testing.TB, token string) {
	t.Helper()
	if r := s.Call(t, security.ResourceAuth, "logout", nil, WithToken(token)); r.Code != 0 {
		t.Fatalf("svctest: logout: %d %s", r.Code, r.Message)
	}
}

// RevokeSession revokes the session of token in the server's session store, as an operator's
// revocation does; the test fails unless a session was revoked.
func (s *Server) RevokeSession(t testing.TB, token string) {
	t.Helper()
	if ok, err := s.Security().Sessions().Revoke(context.Background(), security.SessionID(token)); !ok || err != nil {
		t.Fatalf("svctest: revoke session: %t %v", ok, err)
	}
}

// RevokeSessionOffline revokes the session of token through a session store of its own on the
// server's database, as `svc session revoke` does from another process: no hook of the server
// sees it. The test fails unless a session was revoked.
func (s *Server) RevokeSessionOffline(t testing.TB, token string) {
	t.Helper()
	tool := security.OpenSessions(s.Config(), s.DB(), nil, nil)
	if ok, err := tool.Revoke(context.Background(), security.SessionID(token)); !ok || err != nil {
		t.Fatalf("svctest: revoke session offline: %t %v", ok, err)
	}
}

// User returns a user principal with the given id and roles, for As.
func User(id string, roles ...string) *rpc.Principal {
	if roles == nil {
		roles = []string{}
	}
	return &rpc.Principal{Type: rpc.PrincipalUser, ID: id, Name: id, Roles: roles}
}
