package security_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// TestPasswordChangeChallenge: with max_age set, an expired password presents password_change;
// an empty response is 1037, a policy violation 1050, a reused password 1050, a good one
// completes the login and the new password works.
func TestPasswordChangeChallenge(t *testing.T) {
	e := newEnv(t, withCfg(func(c *config.Config) {
		c.Security.PasswordPolicy = config.PasswordPolicy{MaxAge: 24 * time.Hour, MinLength: 10, HistoryDepth: 3}
	}))
	e.addUser(t, "alice", alicePassword)
	e.login(t, "alice", alicePassword) // fresh: no challenge
	e.clock.Advance(25 * time.Hour)
	r := e.call(t, "login", map[string]any{"type": "password", "principal": "alice", "credentials": alicePassword})
	want(t, r, 200, 0)
	var res security.LoginResult
	r.DataAs(t, &res)
	if res.Challenge == nil || res.Challenge.Type != "password_change" || !res.Challenge.Required {
		t.Fatalf("challenge = %+v, want password_change", res.Challenge)
	}
	resolve := func(resp any) svctest.Response {
		return e.call(t, "resolve_challenge", map[string]any{"challengeToken": res.ChallengeToken, "type": "password_change", "response": resp})
	}
	want(t, resolve(""), 400, rpc.CodeNewPasswordRequired)
	want(t, resolve("short"), 400, rpc.CodePasswordPolicyViolation)
	want(t, resolve(alicePassword), 400, rpc.CodePasswordPolicyViolation)
	r = resolve("a fresh long password")
	want(t, r, 200, 0)
	var done security.LoginResult
	r.DataAs(t, &done)
	if done.Tokens == nil {
		t.Fatalf("data %s, want tokens", r.Data)
	}
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(done.Tokens.AccessToken)), 200, 0)
	e.login(t, "alice", "a fresh long password")
}

// stubTokens is a token service without refresh (the shape of opaque sessions).
type stubTokens struct{}

func (stubTokens) Issue(context.Context, *rpc.Principal) (security.AuthTokens, error) {
	return security.AuthTokens{AccessToken: "opaque"}, nil
}
func (stubTokens) Verify(_ context.Context, tok string) (*rpc.Principal, error) {
	if tok != "opaque" {
		return nil, security.ErrTokenInvalid
	}
	return &rpc.Principal{Type: rpc.PrincipalUser, ID: "u", Name: "u", Roles: []string{}}, nil
}
func (stubTokens) Refresh(context.Context, string) (security.AuthTokens, *rpc.Principal, error) {
	return security.AuthTokens{}, nil, security.ErrTokenInvalid
}
func (stubTokens) Revoke(context.Context, string) error { return nil }
func (stubTokens) SupportsRefresh() bool                { return false }

// TestTokenServiceWithoutRefresh: refresh is not mounted (404/1200) and the login result has
// no refreshToken key.
func TestTokenServiceWithoutRefresh(t *testing.T) {
	e := newEnv(t, withSec(func(o *security.Options) { o.Tokens = stubTokens{} }),
		withCfg(func(c *config.Config) { c.Security.TokenType = config.TokenTypeOpaque }))
	e.addUser(t, "alice", alicePassword)
	r := e.call(t, "login", map[string]any{"type": "password", "principal": "alice", "credentials": alicePassword})
	want(t, r, 200, 0)
	if string(r.Data) != `{"tokens":{"accessToken":"opaque"}}` {
		t.Errorf("data = %s", r.Data)
	}
	want(t, e.call(t, "refresh", map[string]any{"refreshToken": "x"}), 404, rpc.CodeNotFound)
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken("opaque")), 200, 0)
}

// TestMintAccessToken: tokens minted for other modules' tests verify; an unset secret is an
// error instead of a token the server would refuse.
func TestMintAccessToken(t *testing.T) {
	e := newEnv(t)
	p := svctest.User("someone", "ops")
	want(t, e.call(t, "get_user_info", nil, svctest.As(p)), 200, 0)
	cfg := config.Default()
	if _, err := security.MintAccessToken(cfg, p, time.Now()); err == nil {
		t.Error("MintAccessToken without a secret succeeded")
	}
}
