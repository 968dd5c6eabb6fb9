package security_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// forge signs claims like a login would, with the given method and key.
func forge(t *testing.T, method jwt.SigningMethod, key any, mutate func(jwt.MapClaims)) string {
	t.Helper()
	now := start
	c := jwt.MapClaims{"iss": security.Issuer, "aud": "svc-app", "sub": "u1@Mallory", "uid": "u1", "pnm": "Mallory",
		"jti": "j1", "typ": "access", "rls": []string{"admin"}, "iat": now.Unix(), "nbf": now.Unix(),
		"exp": now.Add(30 * time.Minute).Unix()}
	if mutate != nil {
		mutate(c)
	}
	tok, err := jwt.NewWithClaims(method, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestAttacks is the attack table of issue #4: every row must be refused with its code.
func TestAttacks(t *testing.T) {
	e := newEnv(t)
	e.addUser(t, "alice", alicePassword, "admin")
	key, _ := hex.DecodeString(svctest.TestSecret)
	good := forge(t, jwt.SigningMethodHS256, key, nil)
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(good)), 200, 0) // the forge helper is faithful

	noneTok := forge(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, nil)
	otherKey := forge(t, jwt.SigningMethodHS256, []byte("another key entirely, 32 bytes!!"), nil)
	hs512 := forge(t, jwt.SigningMethodHS512, key, nil)
	// RS256 header with an HMAC signature made with the shared secret (key confusion)
	confused := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": security.Issuer, "aud": "svc-app", "uid": "u1",
			"jti": "j", "typ": "access", "iat": start.Unix(), "exp": start.Add(time.Hour).Unix()})
		tok.Header["alg"] = "RS256"
		s, _ := tok.SignedString(key)
		return s
	}()
	pair := e.login(t, "alice", alicePassword)

	tests := []struct {
		name   string
		action string
		params any
		token  string
		status int
		code   int
	}{
		{"alg none", "get_user_info", nil, noneTok, 401, rpc.CodeTokenInvalid},
		{"re-signed with another key", "get_user_info", nil, otherKey, 401, rpc.CodeTokenInvalid},
		{"HS512 with the right key", "get_user_info", nil, hs512, 401, rpc.CodeTokenInvalid},
		{"RS256 header, HMAC body", "get_user_info", nil, confused, 401, rpc.CodeTokenInvalid},
		{"expired", "get_user_info", nil, forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) {
			c["iat"], c["nbf"], c["exp"] = start.Add(-90*time.Minute).Unix(), start.Add(-90*time.Minute).Unix(), start.Add(-time.Hour).Unix()
		}), 401, rpc.CodeTokenExpired},
		// issue #11: a token living longer than the access lifetime was not issued by svc
		{"ten-year lifetime", "get_user_info", nil, forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) {
			c["exp"] = start.AddDate(10, 0, 0).Unix()
		}), 401, rpc.CodeTokenInvalid},
		{"lifetime a minute over", "get_user_info", nil, forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) {
			c["exp"] = start.Add(31 * time.Minute).Unix()
		}), 401, rpc.CodeTokenInvalid},
		{"no iat", "get_user_info", nil, forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) { delete(c, "iat") }), 401, rpc.CodeTokenInvalid},
		{"expired and re-signed with another key", "get_user_info", nil, forge(t, jwt.SigningMethodHS256, []byte("k"), func(c jwt.MapClaims) {
			c["exp"] = start.Add(-time.Hour).Unix()
		}), 401, rpc.CodeTokenInvalid},
		{"wrong audience", "get_user_info", nil, forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) { c["aud"] = "other-app" }), 401, rpc.CodeTokenInvalidAudience},
		{"wrong issuer", "get_user_info", nil, forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) { c["iss"] = "vef" }), 401, rpc.CodeTokenInvalidIssuer},
		{"principal type system (would bypass permissions)", "get_user_info", nil, forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) { c["ptp"] = "system" }), 401, rpc.CodeTokenInvalid},
		{"no exp", "get_user_info", nil, forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) { delete(c, "exp") }), 401, rpc.CodeTokenInvalid},
		{"challenge-typed token as access", "get_user_info", nil, forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) { c["typ"] = "challenge" }), 401, rpc.CodeTokenInvalid},
		{"refresh token as access token", "get_user_info", nil, pair.RefreshToken, 401, rpc.CodeTokenInvalid},
		{"access token as refresh token", "refresh", map[string]any{"refreshToken": pair.AccessToken}, "", 401, rpc.CodeTokenInvalid},
		{"forged refresh token outside any family", "refresh", map[string]any{"refreshToken": forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) {
			c["typ"], c["nbf"], c["fid"] = "refresh", start.Add(-time.Hour).Unix(), "no-such-family"
		})}, "", 401, rpc.CodeTokenInvalid},
		{"access token as challenge token", "resolve_challenge", map[string]any{"challengeToken": pair.AccessToken, "type": "totp", "response": "123456"}, "", 401, rpc.CodeChallengeTokenInvalid},
		{"challenge token signed with the main key", "resolve_challenge", map[string]any{"type": "totp", "response": "123456",
			"challengeToken": forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) { c["typ"], c["pnd"] = "challenge", []string{"totp"} })}, "", 401, rpc.CodeChallengeTokenInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []svctest.CallOption
			if tt.token != "" {
				opts = append(opts, svctest.WithToken(tt.token))
			}
			want(t, e.call(t, tt.action, tt.params, opts...), tt.status, tt.code)
		})
	}
}

// TestUserEnumerationTiming: the median time of a login for an unknown user is within 2× of the
// median for a known user with a wrong password (and the other way round). The hash runs with
// the real default parameters, which dominate a login. The two kinds of login alternate, so a
// burst of load from other processes falls on both medians alike.
func TestUserEnumerationTiming(t *testing.T) {
	e := newEnv(t, withSec(func(o *security.Options) { o.Hash = security.DefaultHashParams }),
		withCfg(func(c *config.Config) { c.Security.Lockout.Enabled = false }))
	e.addUser(t, "alice", alicePassword)
	n := 21
	if testing.Short() {
		n = 9
	}
	login := func(user string) time.Duration {
		t0 := time.Now()
		r := e.call(t, "login", map[string]any{"type": "password", "principal": user, "credentials": "wrong password"})
		d := time.Since(t0)
		if r.Code != rpc.CodeCredentialsInvalid {
			t.Fatalf("login %s: code %d", user, r.Code)
		}
		return d
	}
	login("alice") // warm-up: first-use allocations of the hash memory
	var knowns, unknowns []time.Duration
	for range n {
		knowns = append(knowns, login("alice"))
		unknowns = append(unknowns, login("nobody-at-all"))
	}
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	known, unknown := median(knowns), median(unknowns)
	if unknown > 2*known || known > 2*unknown {
		t.Errorf("median login time: known user %v, unknown user %v; want within 2x", known, unknown)
	}
	t.Logf("median login time: known user %v, unknown user %v", known, unknown)
}

// TestReservedPrincipalAndHostAuthenticator: a host authenticator returning a reserved id is
// refused with 1007; credentials may be any JSON value; with a host password authenticator
// there is no built-in store and get_user_info answers 501/1500.
func TestReservedPrincipalAndHostAuthenticator(t *testing.T) {
	var gotCredentials json.RawMessage
	e := newEnv(t, withSec(func(o *security.Options) {
		o.Authenticators = map[string]security.Authenticator{
			"password": security.AuthenticatorFunc(func(ctx context.Context, req security.LoginRequest) (*rpc.Principal, error) {
				return &rpc.Principal{Type: rpc.PrincipalUser, ID: req.Identifier, Name: req.Identifier, Roles: []string{}}, nil
			}),
			"badge": security.AuthenticatorFunc(func(ctx context.Context, req security.LoginRequest) (*rpc.Principal, error) {
				gotCredentials = req.Credentials
				return &rpc.Principal{Type: rpc.PrincipalUser, ID: "badge-7", Name: "Badge", Roles: []string{}}, nil
			}),
			"refresh": security.AuthenticatorFunc(func(context.Context, security.LoginRequest) (*rpc.Principal, error) {
				return nil, nil
			}),
			"rogue": security.AuthenticatorFunc(func(context.Context, security.LoginRequest) (*rpc.Principal, error) {
				return &rpc.Principal{Type: rpc.PrincipalSystem, ID: "svc-admin", Name: "rogue", Roles: []string{}}, nil
			}),
		}
	}))
	if e.sec.Store() != nil {
		t.Fatal("built-in store in use although the host registered a password authenticator")
	}
	for _, id := range []string{"system", "anonymous", "cron_job"} {
		r := e.call(t, "login", map[string]any{"type": "password", "principal": id, "credentials": "x"})
		want(t, r, 401, rpc.CodePrincipalInvalid)
	}
	// a host authenticator that returns a system principal must not get a token: the system
	// type bypasses every permission check
	want(t, e.call(t, "login", map[string]any{"type": "rogue", "principal": "r", "credentials": "x"}), 401, rpc.CodePrincipalInvalid)
	r := e.call(t, "login", map[string]any{"type": "badge", "principal": "b", "credentials": map[string]any{"card": 7, "pin": []int{1, 2}}})
	want(t, r, 200, 0)
	if string(gotCredentials) != `{"card":7,"pin":[1,2]}` {
		t.Errorf("credentials = %s", gotCredentials)
	}
	want(t, e.call(t, "login", map[string]any{"type": "refresh", "principal": "b", "credentials": "x"}), 400, rpc.CodeUnsupportedAuthenticationType)
	tok := e.login(t, "dave", "x")
	want(t, e.call(t, "get_user_info", nil, svctest.WithToken(tok.AccessToken)), 501, rpc.CodeNotImplemented)
}

// TestEventsCarryNoSecrets: login failed/succeeded, locked, logout, refreshed and reuse
// detected are emitted, and no event carries a password or a token.
func TestEventsCarryNoSecrets(t *testing.T) {
	var mu sync.Mutex
	var events []security.Event
	e := newEnv(t, withSec(func(o *security.Options) {
		o.Events = security.EventSinkFunc(func(_ context.Context, ev security.Event) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		})
	}), withCfg(func(c *config.Config) { c.Security.Lockout.MaxFailures = 2 }))
	e.addUser(t, "alice", alicePassword)
	secrets := []string{alicePassword, "wrong-password"}
	e.call(t, "login", map[string]any{"type": "password", "principal": "bob", "credentials": "wrong-password"})
	e.call(t, "login", map[string]any{"type": "password", "principal": "bob", "credentials": "wrong-password"})
	pair := e.login(t, "alice", alicePassword)
	secrets = append(secrets, pair.AccessToken, pair.RefreshToken)
	e.clock.Advance(16 * time.Minute)
	r := e.call(t, "refresh", map[string]any{"refreshToken": pair.RefreshToken})
	want(t, r, 200, 0)
	var next security.AuthTokens
	r.DataAs(t, &next)
	logoutTok := e.login(t, "alice", alicePassword).AccessToken             // another family: the reuse below revokes next's
	e.call(t, "refresh", map[string]any{"refreshToken": pair.RefreshToken}) // reuse
	want(t, e.call(t, "logout", nil, svctest.WithToken(next.AccessToken)), 401, rpc.CodeTokenInvalid)
	want(t, e.call(t, "logout", nil, svctest.WithToken(logoutTok)), 200, 0)

	mu.Lock()
	defer mu.Unlock()
	got := typesOf(events)
	for _, typ := range []string{security.EventLoginFailed, security.EventAccountLocked, security.EventLoginSucceeded,
		security.EventTokenRefreshed, security.EventRefreshReuseDetected, security.EventLogout} {
		if !slices.Contains(got, typ) {
			t.Errorf("events %v lack %s", got, typ)
		}
	}
	for _, ev := range events {
		b, _ := json.Marshal(ev)
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("event %s carries a secret", b)
			}
		}
		if ev.Time.IsZero() || ev.ClientIP == "" {
			t.Errorf("event %s lacks time or client IP", b)
		}
	}
}

func typesOf(evs []security.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}
