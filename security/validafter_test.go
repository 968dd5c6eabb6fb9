package security_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// TestSameSecondPasswordChange (issue #42 item 6, attack test): a login made in the same second
// as a password change, before it, is refused with the change for good — its access token, its
// refresh token, on every database, for JWTs, database sessions and Redis sessions — while a
// login made after the change in that same second works, refreshes and rotates. The report had
// 6 of 6 same-second logins survive.
func TestSameSecondPasswordChange(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		for _, tokenType := range []config.TokenType{config.TokenTypeJWT, config.TokenTypeOpaque} {
			if b.redis && tokenType == config.TokenTypeJWT {
				continue // Redis holds opaque sessions only
			}
			t.Run(string(tokenType), func(t *testing.T) {
				opts := append(b.options(t), withCfg(func(c *config.Config) {
					c.Security.TokenType = tokenType
					c.Security.RefreshNotBefore = time.Nanosecond
				}))
				e := newEnv(t, opts...)
				ctx := context.Background()
				for i := range 6 { // the report's six tries, at six places in the second
					name := e.freshUser(t)
					u, _ := e.sec.Store().LookupUser(ctx, name)
					e.clock.Set(start.Add(time.Duration(i+1) * time.Minute).Add(time.Duration(i) * 150 * time.Millisecond))
					before := e.login(t, name, alicePassword)
					e.clock.Advance(time.Duration(1+i%3) * time.Millisecond)
					if err := e.sec.Store().ChangePassword(ctx, u.ID, "the changed password"); err != nil {
						t.Fatal(err)
					}
					e.clock.Advance(time.Millisecond)
					after := e.login(t, name, "the changed password")
					if now := e.clock.Now(); now.Truncate(time.Second) != start.Add(time.Duration(i+1)*time.Minute) {
						t.Fatalf("try %d left its second: %v", i, now)
					}
					want(t, e.use(t, before.AccessToken), 401, rpc.CodeTokenInvalid)
					want(t, e.use(t, after.AccessToken), 200, 0)
					if tokenType != config.TokenTypeJWT {
						continue
					}
					want(t, e.call(t, "refresh", map[string]any{"refreshToken": before.RefreshToken}), 401, rpc.CodeTokenInvalid)
					next := after
					for range 3 { // the new login rotates; each pair works
						e.clock.Advance(time.Second)
						r := e.call(t, "refresh", map[string]any{"refreshToken": next.RefreshToken})
						want(t, r, 200, 0)
						r.DataAs(t, &next)
						want(t, e.use(t, next.AccessToken), 200, 0)
					}
				}
			})
		}
	})
}

// TestPasswordChangeChallengeSameInstant: the password_change challenge changes the password and
// issues the login's tokens in the same request; on a frozen clock both happen at one instant,
// and the tokens must still work (the login observed the change, so it is stamped after it),
// for JWTs and for database and Redis sessions.
func TestPasswordChangeChallengeSameInstant(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		for _, tokenType := range []config.TokenType{config.TokenTypeJWT, config.TokenTypeOpaque} {
			if b.redis && tokenType == config.TokenTypeJWT {
				continue
			}
			t.Run(string(tokenType), func(t *testing.T) {
				opts := append(b.options(t), withCfg(func(c *config.Config) {
					c.Security.TokenType = tokenType
					c.Security.PasswordPolicy.MaxAge = time.Hour
				}))
				e := newEnv(t, opts...)
				name := e.freshUser(t)
				e.clock.Advance(2 * time.Hour)
				res, _ := e.passwordLogin(t, name, alicePassword)
				if res.Challenge == nil || res.Challenge.Type != security.ChallengePasswordChange {
					t.Fatalf("login answered %+v, want password_change", res)
				}
				r := e.call(t, "resolve_challenge", map[string]any{"challengeToken": res.ChallengeToken, "type": security.ChallengePasswordChange,
					"response": "a fresh password now"})
				want(t, r, 200, 0)
				var done security.LoginResult
				r.DataAs(t, &done)
				if done.Tokens == nil {
					t.Fatalf("resolve answered %s", r.Data)
				}
				want(t, e.use(t, done.Tokens.AccessToken), 200, 0)
			})
		}
	})
}

// TestChallengeTokenBeforePasswordChange: a login begun before a password change (password
// accepted, TOTP pending) cannot be finished after it, even in the same second: the challenge
// token is refused (401/1031) and no tokens are issued. On every database.
func TestChallengeTokenBeforePasswordChange(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		e := newEnv(t, onDB(kind))
		ctx := context.Background()
		name := e.freshUser(t)
		secret := enrollTOTP(t, e, name)
		e.clock.Advance(100 * time.Millisecond)
		res, _ := e.passwordLogin(t, name, alicePassword)
		if res.Challenge == nil || res.Challenge.Type != security.ChallengeTOTP {
			t.Fatalf("login answered %+v", res)
		}
		e.clock.Advance(100 * time.Millisecond)
		if err := e.sec.Store().ChangePassword(ctx, e.userID(t, name), "the changed password"); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(100 * time.Millisecond)
		want(t, e.call(t, "resolve_challenge", map[string]any{"challengeToken": res.ChallengeToken, "type": security.ChallengeTOTP,
			"response": totpCode(t, secret, e.clock.Now())}), 401, rpc.CodeChallengeTokenInvalid)
	})
}

// staleState is a host TokenStateLoader that can answer an old ValidAfter, as a node the
// change has not reached yet would.
type staleState struct {
	mu         sync.Mutex
	validAfter time.Time
	stale      bool
}

func (s *staleState) TokenState(context.Context, string) (security.TokenState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stale {
		return security.TokenState{}, nil
	}
	return security.TokenState{ValidAfter: s.validAfter}, nil
}

// TestRefreshKeepsLoginInstant: a refresh that a node answers before a password change reaches
// it mints a pair that the change still refuses once it arrives, because the pair carries the
// login's instant, not the refresh's. Before issue #42 the pair's iat was later than the
// change, so such a pair lived on and rotated for good.
func TestRefreshKeepsLoginInstant(t *testing.T) {
	state := &staleState{}
	e := newEnv(t, withSec(func(o *security.Options) { o.TokenState = state }),
		withCfg(func(c *config.Config) { c.Security.RefreshNotBefore = time.Nanosecond }))
	name := e.freshUser(t)
	e.clock.Advance(time.Second)
	pair := e.login(t, name, alicePassword)
	e.clock.Advance(time.Second)
	state.mu.Lock()
	state.validAfter, state.stale = e.clock.Now(), true // changed; this node does not know yet
	state.mu.Unlock()
	e.clock.Advance(time.Second)
	r := e.call(t, "refresh", map[string]any{"refreshToken": pair.RefreshToken})
	want(t, r, 200, 0)
	var next security.AuthTokens
	r.DataAs(t, &next)
	state.mu.Lock()
	state.stale = false // the change arrives
	state.mu.Unlock()
	e.clock.Advance(10 * time.Second) // past the host state's cache
	want(t, e.use(t, next.AccessToken), 401, rpc.CodeTokenInvalid)
	want(t, e.call(t, "refresh", map[string]any{"refreshToken": next.RefreshToken}), 401, rpc.CodeTokenInvalid)
}
