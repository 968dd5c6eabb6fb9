package security_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

const alicePassword = "correct horse battery staple"

// fixture is the shared state of one scenario run: a server and its users.
type fixture struct {
	e      *env
	alice  *security.User
	tokens security.AuthTokens
}

// scenario is one row: an action with params, optional bearer token or extra options, and the
// expected HTTP status and business code.
type scenario struct {
	name       string
	action     string
	params     func(f *fixture) any
	opts       func(f *fixture) []svctest.CallOption
	wantStatus int
	wantCode   int
	check      func(t *testing.T, f *fixture, r svctest.Response)
}

func loginParams(user string, credentials any) func(*fixture) any {
	return func(*fixture) any {
		return map[string]any{"type": "password", "principal": user, "credentials": credentials}
	}
}

func bearer(tok func(f *fixture) string) func(*fixture) []svctest.CallOption {
	return func(f *fixture) []svctest.CallOption { return []svctest.CallOption{svctest.WithToken(tok(f))} }
}

// TestAuthScenarios runs every action of security/auth and every code it answers with through
// the real server, on SQLite, PostgreSQL and MariaDB.
func TestAuthScenarios(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEnv(t, onDB(kind))
		f := &fixture{e: e, alice: e.addUser(t, "alice", alicePassword, "ops")}
		bob := e.addUser(t, "bob", "bob-password-1", "viewer")
		if err := e.sec.Store().SetDisabled(context.Background(), bob.Username, true); err != nil {
			t.Fatal(err)
		}
		f.tokens = e.login(t, "alice", alicePassword)
		for _, sc := range scenarios() {
			t.Run(sc.name, func(t *testing.T) {
				var params any
				if sc.params != nil {
					params = sc.params(f)
				}
				var opts []svctest.CallOption
				if sc.opts != nil {
					opts = sc.opts(f)
				}
				r := e.call(t, sc.action, params, opts...)
				want(t, r, sc.wantStatus, sc.wantCode)
				if sc.check != nil {
					sc.check(t, f, r)
				}
			})
		}
	})
}

func scenarios() []scenario {
	access := func(f *fixture) string { return f.tokens.AccessToken }
	return []scenario{
		{name: "login ok", action: "login", params: loginParams("alice", alicePassword), wantStatus: 200,
			check: func(t *testing.T, f *fixture, r svctest.Response) {
				if got := keys(t, r.Data); !cmp.Equal(got, []string{"tokens"}) {
					t.Errorf("data keys = %v, want [tokens]", got)
				}
				var res security.LoginResult
				r.DataAs(t, &res)
				if res.Tokens.AccessToken == "" || res.Tokens.RefreshToken == "" {
					t.Errorf("tokens = %+v, want both", res.Tokens)
				}
			}},
		{name: "login case and white space of the user name", action: "login", params: loginParams("  ALICE\t", alicePassword), wantStatus: 200},
		{name: "login wrong password", action: "login", params: loginParams("alice", "wrong"), wantStatus: 401, wantCode: rpc.CodeCredentialsInvalid,
			check: func(t *testing.T, _ *fixture, r svctest.Response) {
				if r.Message != "Invalid user name or password" {
					t.Errorf("message = %q", r.Message)
				}
			}},
		{name: "login unknown user", action: "login", params: loginParams("mallory", alicePassword), wantStatus: 401, wantCode: rpc.CodeCredentialsInvalid},
		{name: "login disabled user", action: "login", params: loginParams("bob", "bob-password-1"), wantStatus: 401, wantCode: rpc.CodeCredentialsInvalid},
		{name: "login credentials not a string", action: "login", params: loginParams("alice", map[string]any{"p": 1}), wantStatus: 401, wantCode: rpc.CodeCredentialsInvalid},
		{name: "login unknown type", action: "login", wantStatus: 400, wantCode: rpc.CodeUnsupportedAuthenticationType,
			params: func(*fixture) any {
				return map[string]any{"type": "carrier_pigeon", "principal": "alice", "credentials": "x"}
			}},
		{name: "login trust_code while trust login is off", action: "login", wantStatus: 400, wantCode: rpc.CodeUnsupportedAuthenticationType,
			params: func(*fixture) any {
				return map[string]any{"type": "trust_code", "principal": "app", "credentials": "code"}
			}},
		{name: "login token type as login type", action: "login", wantStatus: 400, wantCode: rpc.CodeUnsupportedAuthenticationType,
			params: func(*fixture) any {
				return map[string]any{"type": "jwt_token", "principal": "alice", "credentials": "x"}
			}},
		{name: "login without principal", action: "login", wantStatus: 400, wantCode: rpc.CodeBadRequest,
			params: func(*fixture) any { return map[string]any{"type": "password", "credentials": "x"} }},
		{name: "login without credentials", action: "login", wantStatus: 400, wantCode: rpc.CodeBadRequest,
			params: func(*fixture) any { return map[string]any{"type": "password", "principal": "alice"} }},
		{name: "get_user_info without token", action: "get_user_info", wantStatus: 401, wantCode: rpc.CodeUnauthenticated},
		{name: "get_user_info with malformed token", action: "get_user_info", wantStatus: 401, wantCode: rpc.CodeTokenInvalid,
			opts: bearer(func(*fixture) string { return "not.a.jwt" })},
		{name: "get_user_info", action: "get_user_info", opts: bearer(access), wantStatus: 200,
			params: func(*fixture) any { return map[string]any{"anything": "forwarded"} },
			check: func(t *testing.T, f *fixture, r svctest.Response) {
				wantJSON := `{"id":"` + f.alice.ID + `","name":"Alice","gender":"unknown","avatar":null,"permissionTokens":["cron.*","sys.monitor"],"menus":[]}`
				if diff := cmp.Diff(wantJSON, string(r.Data)); diff != "" {
					t.Errorf("user info (-want +got):\n%s", diff)
				}
			}},
		{name: "get_user_info with lower-case scheme", action: "get_user_info", wantStatus: 200,
			opts: func(f *fixture) []svctest.CallOption {
				return []svctest.CallOption{svctest.WithHeader("Authorization", "bearer "+f.tokens.AccessToken)}
			}},
		{name: "refresh token as access token", action: "get_user_info", wantStatus: 401, wantCode: rpc.CodeTokenInvalid,
			opts: bearer(func(f *fixture) string { return f.tokens.RefreshToken })},
		{name: "refresh before refresh_not_before", action: "refresh", wantStatus: 401, wantCode: rpc.CodeTokenNotValidYet,
			params: func(f *fixture) any { return map[string]any{"refreshToken": f.tokens.RefreshToken} }},
		{name: "refresh with an access token", action: "refresh", wantStatus: 401, wantCode: rpc.CodeTokenInvalid,
			params: func(f *fixture) any { return map[string]any{"refreshToken": f.tokens.AccessToken} }},
		{name: "refresh without token", action: "refresh", wantStatus: 400, wantCode: rpc.CodeBadRequest,
			params: func(*fixture) any { return map[string]any{} }},
		{name: "logout without token", action: "logout", wantStatus: 401, wantCode: rpc.CodeUnauthenticated},
		{name: "logout", action: "logout", opts: bearer(access), wantStatus: 200,
			check: func(t *testing.T, _ *fixture, r svctest.Response) {
				if string(r.Data) != "null" {
					t.Errorf("data = %s, want null", r.Data)
				}
			}},
		{name: "unknown action", action: "nope", wantStatus: 404, wantCode: rpc.CodeNotFound},
	}
}

// TestTokenLifecycle: refresh after refresh_not_before returns the pair unwrapped, the access
// token expires with 1002 after 30 minutes, rotation refuses a reused refresh token and revokes
// the family, and logout revokes the refresh token.
func TestTokenLifecycle(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEnv(t, onDB(kind))
		e.addUser(t, "alice", alicePassword)
		first := e.login(t, "alice", alicePassword)

		e.clock.Advance(15*time.Minute + time.Second)
		r := e.call(t, "refresh", map[string]any{"refreshToken": first.RefreshToken})
		want(t, r, 200, 0)
		if got := keys(t, r.Data); !cmp.Equal(got, []string{"accessToken", "refreshToken"}) {
			t.Fatalf("refresh data keys = %v, want the pair unwrapped", got)
		}
		var second security.AuthTokens
		r.DataAs(t, &second)

		e.clock.Advance(16 * time.Minute) // first access token is now 31 minutes old
		want(t, e.call(t, "get_user_info", nil, svctest.WithToken(first.AccessToken)), 401, rpc.CodeTokenExpired)
		want(t, e.call(t, "get_user_info", nil, svctest.WithToken(second.AccessToken)), 200, 0)

		// reuse of the exchanged refresh token: refused, and the whole family is revoked
		want(t, e.call(t, "refresh", map[string]any{"refreshToken": first.RefreshToken}), 401, rpc.CodeTokenInvalid)
		want(t, e.call(t, "refresh", map[string]any{"refreshToken": second.RefreshToken}), 401, rpc.CodeTokenInvalid)

		// logout revokes the refresh token of the session
		third := e.login(t, "alice", alicePassword)
		want(t, e.call(t, "logout", nil, svctest.WithToken(third.AccessToken)), 200, 0)
		e.clock.Advance(15*time.Minute + time.Second)
		want(t, e.call(t, "refresh", map[string]any{"refreshToken": third.RefreshToken}), 401, rpc.CodeTokenInvalid)

		// an expired refresh token answers 1002
		fourth := e.login(t, "alice", alicePassword)
		e.clock.Advance(169 * time.Hour)
		want(t, e.call(t, "refresh", map[string]any{"refreshToken": fourth.RefreshToken}), 401, rpc.CodeTokenExpired)
	})
}

// TestPasswordChangeAndDisableRefuseOldTokens (beyond the original).
func TestPasswordChangeAndDisableRefuseOldTokens(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEnv(t, onDB(kind))
		ctx := context.Background()
		e.addUser(t, "alice", alicePassword)
		old := e.login(t, "alice", alicePassword)
		e.clock.Advance(time.Second)
		if err := e.sec.Store().SetPassword(ctx, "alice", "a brand new password"); err != nil {
			t.Fatal(err)
		}
		want(t, e.call(t, "get_user_info", nil, svctest.WithToken(old.AccessToken)), 401, rpc.CodeTokenInvalid)
		e.clock.Advance(15 * time.Minute)
		want(t, e.call(t, "refresh", map[string]any{"refreshToken": old.RefreshToken}), 401, rpc.CodeTokenInvalid)
		want(t, e.call(t, "login", map[string]any{"type": "password", "principal": "alice", "credentials": alicePassword}), 401, rpc.CodeCredentialsInvalid)

		fresh := e.login(t, "alice", "a brand new password")
		want(t, e.call(t, "get_user_info", nil, svctest.WithToken(fresh.AccessToken)), 200, 0)
		e.clock.Advance(time.Second)
		if err := e.sec.Store().SetDisabled(ctx, "alice", true); err != nil {
			t.Fatal(err)
		}
		want(t, e.call(t, "get_user_info", nil, svctest.WithToken(fresh.AccessToken)), 401, rpc.CodeTokenInvalid)
	})
}

// TestRateLimits: login and resolve_challenge use login_rate_limit (default 6), refresh
// refresh_rate_limit (default 1); the next call answers 429/1401.
func TestRateLimits(t *testing.T) {
	e := newEnv(t, withCfg(func(c *config.Config) { c.Security.LoginRateLimit, c.Security.RefreshRateLimit = 6, 1 }))
	for i := range 6 {
		r := e.call(t, "login", map[string]any{"type": "password", "principal": "nobody", "credentials": "x"})
		if r.Code != rpc.CodeCredentialsInvalid {
			t.Fatalf("login %d: code %d, want 1008", i+1, r.Code)
		}
	}
	want(t, e.call(t, "login", map[string]any{"type": "password", "principal": "nobody", "credentials": "x"}), 429, rpc.CodeTooManyRequests)
	for range 6 {
		e.call(t, "resolve_challenge", map[string]any{"challengeToken": "x", "type": "totp", "response": "1"})
	}
	want(t, e.call(t, "resolve_challenge", map[string]any{"challengeToken": "x", "type": "totp", "response": "1"}), 429, rpc.CodeTooManyRequests)
	want(t, e.call(t, "refresh", map[string]any{"refreshToken": "x"}), 401, rpc.CodeTokenInvalid)
	want(t, e.call(t, "refresh", map[string]any{"refreshToken": "x"}), 429, rpc.CodeTooManyRequests)
}

// totpCode is the code of secret at t.
func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// enrollTOTP activates TOTP for a user and returns its secret.
func enrollTOTP(t *testing.T, e *env, user string) string {
	t.Helper()
	ctx := context.Background()
	en, err := e.sec.Store().BeginTOTP(ctx, user, "svc-test")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(en.URI, "otpauth://totp/") {
		t.Fatalf("uri = %q", en.URI)
	}
	if err := e.sec.Store().ConfirmTOTP(ctx, user, totpCode(t, en.Secret, e.clock.Now())); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(30 * time.Second) // the confirming code is spent
	return en.Secret
}

// TestTOTPChallenge: login presents the totp challenge; resolve_challenge with the wrong type
// (1033), an empty code (1035), a wrong code (1036), a tampered (1031) or expired (1031)
// challenge token; a right code gives tokens; the same code cannot be replayed (1036).
func TestTOTPChallenge(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEnv(t, onDB(kind))
		e.addUser(t, "carol", "carol-password-1")
		secret := enrollTOTP(t, e, "carol")

		begin := func() (string, security.LoginResult) {
			res, r := e.passwordLogin(t, "carol", "carol-password-1")
			if got := keys(t, r.Data); !cmp.Equal(got, []string{"challenge", "challengeToken"}) {
				t.Fatalf("login data keys = %v", got)
			}
			return res.ChallengeToken, res
		}
		ct, res := begin()
		wantCh := &security.LoginChallenge{Type: "totp", Data: map[string]any{"destination": "Authenticator App"}, Required: true}
		if diff := cmp.Diff(wantCh, res.Challenge); diff != "" {
			t.Errorf("challenge (-want +got):\n%s", diff)
		}
		resolve := func(tok, typ string, response any) svctest.Response {
			return e.call(t, "resolve_challenge", map[string]any{"challengeToken": tok, "type": typ, "response": response})
		}
		code := totpCode(t, secret, e.clock.Now())
		want(t, resolve(ct, "sms_otp", code), 400, rpc.CodeChallengeTypeInvalid)
		want(t, resolve(ct, "totp", ""), 400, rpc.CodeOTPCodeRequired)
		want(t, resolve(ct, "totp", 123456), 400, rpc.CodeOTPCodeRequired)
		want(t, resolve(ct, "totp", wrongCode(code)), 401, rpc.CodeOTPCodeInvalid)
		want(t, resolve(tamper(ct), "totp", code), 401, rpc.CodeChallengeTokenInvalid)
		want(t, resolve("garbage", "totp", code), 401, rpc.CodeChallengeTokenInvalid)

		r := resolve(ct, "totp", code)
		want(t, r, 200, 0)
		var done security.LoginResult
		r.DataAs(t, &done)
		if done.Tokens == nil || done.Tokens.AccessToken == "" {
			t.Fatalf("resolve data = %s, want tokens", r.Data)
		}
		want(t, e.call(t, "get_user_info", nil, svctest.WithToken(done.Tokens.AccessToken)), 200, 0)

		// replay: the same code with a fresh challenge is refused within its window
		ct2, _ := begin()
		want(t, resolve(ct2, "totp", code), 401, rpc.CodeOTPCodeInvalid)
		// the next step's code works
		e.clock.Advance(30 * time.Second)
		want(t, resolve(ct2, "totp", totpCode(t, secret, e.clock.Now())), 200, 0)

		// a challenge token lives 5 minutes
		ct3, _ := begin()
		e.clock.Advance(5*time.Minute + 11*time.Second)
		want(t, resolve(ct3, "totp", totpCode(t, secret, e.clock.Now())), 401, rpc.CodeChallengeTokenInvalid)
	})
}

func wrongCode(code string) string {
	b := []byte(code)
	b[0] = '0' + (b[0]-'0'+1)%10
	return string(b)
}

// tamper flips one character of the payload of a JWT, keeping its signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	p := []byte(parts[1])
	if p[5] == 'A' {
		p[5] = 'B'
	} else {
		p[5] = 'A'
	}
	parts[1] = string(p)
	return strings.Join(parts, ".")
}

// TestLockout: after max_failures the next login answers 429/1023 with the wait in minutes and
// Retry-After in seconds (issue #11; the original sends none),
// even with the right password and whatever the case or white space of the user name; after
// lock_duration login works and success clears the counter.
func TestLockout(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEnv(t, onDB(kind))
		e.addUser(t, "alice", alicePassword)
		lockoutScenario(t, e)
	})
}

// TestLockoutRedis runs the lockout scenario with the state in the real Redis.
func TestLockoutRedis(t *testing.T) {
	kvc := svctest.RedisConfig(t)
	e := newEnv(t, withCfg(func(c *config.Config) {
		c.KVStore = kvc
		c.App.Name = strings.TrimSuffix(svctest.UniquePrefix(t), ":")
	}))
	e.addUser(t, "alice", alicePassword)
	lockoutScenario(t, e)
}

func lockoutScenario(t *testing.T, e *env) {
	t.Helper()
	login := func(user, pw string) svctest.Response {
		return e.call(t, "login", map[string]any{"type": "password", "principal": user, "credentials": pw})
	}
	for i := range 10 {
		want(t, login("alice", "wrong-"+string(rune('a'+i))), 401, rpc.CodeCredentialsInvalid)
	}
	for _, name := range []string{"alice", "ALICE", " Alice ", "alice\t"} {
		r := login(name, alicePassword)
		want(t, r, 429, rpc.CodeAccountLocked)
		if !strings.Contains(r.Message, "15 minute") {
			t.Errorf("message = %q, want the wait of 15 minutes", r.Message)
		}
		if got := r.Header.Get("Retry-After"); got != "900" {
			t.Errorf("Retry-After = %q, want 900 (the lock_duration of 15 minutes)", got)
		}
	}
	e.clock.Advance(14*time.Minute + 30*time.Second)
	r := login("alice", alicePassword)
	want(t, r, 429, rpc.CodeAccountLocked)
	if !strings.Contains(r.Message, "1 minute") {
		t.Errorf("message = %q, want 1 minute", r.Message)
	}
	if got := r.Header.Get("Retry-After"); got != "30" {
		t.Errorf("Retry-After = %q, want 30", got)
	}
	e.clock.Advance(30*time.Second + time.Second)
	want(t, login("alice", alicePassword), 200, 0)
	// success cleared the counter: nine new failures do not lock
	for range 9 {
		want(t, login("alice", "wrong"), 401, rpc.CodeCredentialsInvalid)
	}
	want(t, login("alice", alicePassword), 200, 0)
}

// TestChallengeFailuresLock: a verified password clears the login counter (wire-core §5.6), but
// wrong TOTP codes keep counting across password logins until a login completes. After
// max_failures wrong codes spread over four password logins, resolve_challenge answers 429/1023
// even with the right code, while the password step still answers; once the block has passed,
// a completed login clears the counter.
func TestChallengeFailuresLock(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEnv(t, onDB(kind))
		e.addUser(t, "dora", "dora-password-1")
		secret := enrollTOTP(t, e, "dora")
		begin := func() string {
			res, _ := e.passwordLogin(t, "dora", "dora-password-1")
			return res.ChallengeToken
		}
		resolve := func(tok, code string) svctest.Response {
			return e.call(t, "resolve_challenge", map[string]any{"challengeToken": tok, "type": "totp", "response": code})
		}
		var ct string
		for i := range 10 { // three wrong codes per password login, ten in all
			if i%3 == 0 {
				ct = begin()
			}
			want(t, resolve(ct, wrongCode(totpCode(t, secret, e.clock.Now()))), 401, rpc.CodeOTPCodeInvalid)
		}
		ct = begin()
		r := resolve(ct, totpCode(t, secret, e.clock.Now()))
		want(t, r, 429, rpc.CodeAccountLocked)
		if !strings.Contains(r.Message, "15 minute") {
			t.Errorf("message = %q, want the wait of 15 minutes", r.Message)
		}
		if got := r.Header.Get("Retry-After"); got != "900" {
			t.Errorf("Retry-After = %q, want 900", got)
		}

		e.clock.Advance(15*time.Minute + time.Second)
		want(t, resolve(begin(), totpCode(t, secret, e.clock.Now())), 200, 0)
		// the completed login cleared the counter: nine new wrong codes do not lock
		e.clock.Advance(30 * time.Second) // a fresh code: the last one is spent
		for i := range 9 {
			if i%3 == 0 {
				ct = begin()
			}
			want(t, resolve(ct, wrongCode(totpCode(t, secret, e.clock.Now()))), 401, rpc.CodeOTPCodeInvalid)
		}
		want(t, resolve(begin(), totpCode(t, secret, e.clock.Now())), 200, 0)
	})
}

// TestStrategies: api_key, http_basic and ip through a host resource, with the principals and
// codes of wire-core §3.1.
func TestStrategies(t *testing.T) {
	whoami := func(ctx context.Context, c rpc.Call, _ rpc.NoParams) (*rpc.Principal, error) { return c.Principal, nil }
	res := rpc.Resource{Name: "test/who", Ops: []rpc.Op{
		rpc.Handle("api_key", whoami, rpc.Auth(rpc.StrategyAPIKey)),
		rpc.Handle("api_key_custom", whoami, rpc.Auth(rpc.StrategyAPIKey, "X-Custom-Key")),
		rpc.Handle("basic", whoami, rpc.Auth(rpc.StrategyHTTPBasic)),
		rpc.Handle("ip_default", whoami, rpc.Auth(rpc.StrategyIP)),
		rpc.Handle("ip_office", whoami, rpc.Auth(rpc.StrategyIP, "Office")),
		rpc.Handle("ip_missing", whoami, rpc.Auth(rpc.StrategyIP, "nope")),
		rpc.Handle("cron", whoami, rpc.RequiredPermission("cron.schedule.query")),
	}}
	e := newEnv(t, withResources(res), withCfg(func(c *config.Config) {
		c.Security.APIKeys = map[string]config.APIKey{"billing": {Key: "k-0123456789abcdef", Roles: []string{"ops"}}}
		c.Security.BasicAccounts = map[string]config.BasicAccount{"robot": {Password: "robot-pw", Roles: []string{"viewer"}}}
		c.Security.IPWhitelists = map[string][]string{"default": {"127.0.0.0/8"}, "office": {"10.1.0.0/16", "192.0.2.7"}}
	}))
	basic := func(user, pw string) string {
		return "Basic " + b64(user+":"+pw)
	}
	tests := []struct {
		name, action string
		header       [2]string
		as           *rpc.Principal
		status, code int
		id           string
	}{
		{"api key", "api_key", [2]string{"X-API-Key", "k-0123456789abcdef"}, nil, 200, 0, "api_key:billing"},
		{"api key wrong", "api_key", [2]string{"X-API-Key", "k-0123456789abcdeX"}, nil, 401, rpc.CodeAPIKeyInvalid, ""},
		{"api key missing", "api_key", [2]string{}, nil, 401, rpc.CodeAPIKeyInvalid, ""},
		{"api key custom header", "api_key_custom", [2]string{"X-Custom-Key", "k-0123456789abcdef"}, nil, 200, 0, "api_key:billing"},
		{"api key in default header for custom op", "api_key_custom", [2]string{"X-API-Key", "k-0123456789abcdef"}, nil, 401, rpc.CodeAPIKeyInvalid, ""},
		{"basic", "basic", [2]string{"Authorization", basic("robot", "robot-pw")}, nil, 200, 0, "http_basic:robot"},
		{"basic lower-case scheme", "basic", [2]string{"Authorization", "basic " + b64("robot:robot-pw")}, nil, 200, 0, "http_basic:robot"},
		{"basic wrong password", "basic", [2]string{"Authorization", basic("robot", "nope")}, nil, 401, rpc.CodeBasicCredentialsInvalid, ""},
		{"basic unknown user", "basic", [2]string{"Authorization", basic("ghost", "robot-pw")}, nil, 401, rpc.CodeBasicCredentialsInvalid, ""},
		{"basic malformed", "basic", [2]string{"Authorization", "Basic !!!"}, nil, 401, rpc.CodeBasicCredentialsInvalid, ""},
		{"basic missing", "basic", [2]string{}, nil, 401, rpc.CodeBasicCredentialsInvalid, ""},
		{"ip default list", "ip_default", [2]string{}, nil, 200, 0, "ip:default"},
		{"ip other list", "ip_office", [2]string{}, nil, 401, rpc.CodeIPNotAllowed, ""},
		{"ip unknown list", "ip_missing", [2]string{}, nil, 401, rpc.CodeIPNotAllowed, ""},
		{"permission by wildcard role", "cron", [2]string{}, svctest.User("u1", "ops"), 200, 0, "u1"},
		{"permission by star role", "cron", [2]string{}, svctest.User("u2", "admin"), 200, 0, "u2"},
		{"permission denied", "cron", [2]string{}, svctest.User("u3", "viewer"), 403, rpc.CodeAccessDenied, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []svctest.CallOption
			if tt.header[0] != "" {
				opts = append(opts, svctest.WithHeader(tt.header[0], tt.header[1]))
			}
			if tt.as != nil {
				opts = append(opts, svctest.As(tt.as))
			}
			r := e.srv.Call(t, "test/who", tt.action, nil, opts...)
			want(t, r, tt.status, tt.code)
			if tt.code == rpc.CodeBasicCredentialsInvalid && r.Header.Get("WWW-Authenticate") != "" {
				t.Errorf("WWW-Authenticate = %q, want none", r.Header.Get("WWW-Authenticate"))
			}
			if tt.id != "" {
				var p rpc.Principal
				r.DataAs(t, &p)
				if p.ID != tt.id {
					t.Errorf("principal id = %q, want %q", p.ID, tt.id)
				}
			}
		})
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestAccessTokenInQuery: the bearer strategy also reads ?__accessToken= (wire-core §3.1).
func TestAccessTokenInQuery(t *testing.T) {
	e := newEnv(t)
	e.addUser(t, "alice", alicePassword)
	tok := e.login(t, "alice", alicePassword)
	body := `{"resource":"security/auth","action":"get_user_info","version":"v1"}`
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/api?__accessToken="+tok.AccessToken, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, raw := e.srv.Do(t, req)
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `"code":0`) {
		t.Fatalf("status %d body %s, want 200 code 0", resp.StatusCode, raw)
	}
}

// TestChineseBodiesMatchTheOriginal: on a zh-CN server the error bodies of the security path are
// byte for byte those captured from the original (spec/wire-samples.txt).
func TestChineseBodiesMatchTheOriginal(t *testing.T) {
	e := newEnv(t, withCfg(func(c *config.Config) { c.I18n.Language = "zh-CN" }))
	e.addUser(t, "alice", alicePassword)
	for _, tt := range []struct {
		name string
		r    svctest.Response
		want string
	}{
		{"no token", e.call(t, "get_user_info", nil), `{"code":1000,"message":"未认证","data":null}`},
		{"bad token", e.call(t, "get_user_info", nil, svctest.WithToken("not-a-token")), `{"code":1003,"message":"无效的令牌","data":null}`},
		{"wrong password", e.call(t, "login", map[string]any{"type": "password", "principal": "alice", "credentials": "wrong"}),
			`{"code":1008,"message":"账号或密码错误","data":null}`},
		{"unknown action", e.call(t, "no_such_action", nil), `{"code":1200,"message":"迷路了","data":null}`},
	} {
		if got := strings.TrimSpace(string(tt.r.Body)); got != tt.want {
			t.Errorf("%s: body %s, want %s", tt.name, got, tt.want)
		}
	}
	if r := e.call(t, "logout", nil, svctest.WithToken(e.login(t, "alice", alicePassword).AccessToken)); r.Message != "成功" {
		t.Errorf("success message = %q, want 成功", r.Message)
	}
}
