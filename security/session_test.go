package security_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/svctest"
)

// opaqueToken is the wire form of wire-core §5.5: 32 bytes, base64url, no padding.
var opaqueToken = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// sessionFixture is one server in opaque mode with its revocation recorder.
type sessionFixture struct {
	e   *env
	rec *revocations
	b   backend
}

// sessionScenario is one rule of issue #5 part 1–2, run on its own users so rows can share a
// server per session configuration.
type sessionScenario struct {
	name string
	// session changes the session defaults (nil: defaults with max_lifetime 2h).
	session string
	run     func(t *testing.T, f *sessionFixture)
}

// sessionConfigs are the session settings the scenario rows run under.
var sessionConfigs = map[string]func(*config.Session){
	"sliding": func(s *config.Session) { s.MaxLifetime = 2 * time.Hour },
	"fixed":   func(s *config.Session) { s.Sliding = false },
	"evict":   func(s *config.Session) { s.MaxConcurrent = 2 },
	"reject":  func(s *config.Session) { s.MaxConcurrent = 2; s.OnExceed = config.OnExceedReject },
}

// TestOpaqueSessions runs every session rule on SQLite, PostgreSQL, MariaDB and Redis.
func TestOpaqueSessions(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		t.Parallel()
		fixtures := map[string]*sessionFixture{}
		fixture := func(t *testing.T, name string) *sessionFixture {
			if f, ok := fixtures[name]; ok {
				return f
			}
			rec := &revocations{}
			opts := append(b.options(t), opaque(sessionConfigs[name]), withSec(func(o *security.Options) { o.OnRevoke = rec.hook }))
			f := &sessionFixture{e: newEnv(t, opts...), rec: rec, b: b}
			fixtures[name] = f
			return f
		}
		for _, sc := range sessionScenarios() {
			f := fixture(t, sc.session)
			t.Run(sc.name, func(t *testing.T) { sc.run(t, f) })
		}
	})
}

func sessionScenarios() []sessionScenario {
	return []sessionScenario{
		{name: "login gives a 43-character base64url token and no refresh token", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			user := f.e.freshUser(t)
			r := f.e.call(t, "login", map[string]any{"type": "password", "principal": user, "credentials": alicePassword})
			want(t, r, 200, 0)
			var res struct {
				Tokens map[string]string `json:"tokens"`
			}
			r.DataAs(t, &res)
			if got := keys(t, mustJSON(t, res.Tokens)); !cmp.Equal(got, []string{"accessToken"}) {
				t.Errorf("token keys = %v, want [accessToken]", got)
			}
			if !opaqueToken.MatchString(res.Tokens["accessToken"]) {
				t.Errorf("access token %q is not 43 base64url characters", res.Tokens["accessToken"])
			}
		}},
		{name: "bearer header and __accessToken query authenticate", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			tok := f.e.access(t, f.e.freshUser(t))
			want(t, f.e.use(t, tok), 200, 0)
			r := f.e.srv.Call(t, security.ResourceAuth, "get_user_info", nil, svctest.WithHeader("X-Unused", "1"))
			want(t, r, 401, rpc.CodeUnauthenticated)
			req := mustRequest(t, "/api?__accessToken="+tok, `{"resource":"security/auth","action":"get_user_info","version":"v1"}`)
			resp, body := f.e.srv.Do(t, req)
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"code":0`) {
				t.Errorf("query token: %d %s", resp.StatusCode, body)
			}
		}},
		{name: "refresh is not mounted", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			want(t, f.e.call(t, "refresh", map[string]any{"refreshToken": "x"}), 404, rpc.CodeNotFound)
		}},
		{name: "unknown, malformed and JWT tokens are 1003", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			fake, _ := security.GenerateOpaqueToken()
			for _, tok := range []string{fake, "short", strings.Repeat("!", 43), f.e.srv.Token(t, svctest.User("u1"))} {
				want(t, f.e.use(t, tok), 401, rpc.CodeTokenInvalid)
			}
		}},
		{name: "only the token's hash is stored", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			user := f.e.freshUser(t)
			tok := f.e.access(t, user)
			ss, err := f.e.sec.Sessions().List(context.Background(), f.e.userID(t, user))
			if err != nil || len(ss) != 1 || ss[0].ID != security.SessionID(tok) {
				t.Fatalf("sessions = %+v, %v; want one with id SessionID(token)", ss, err)
			}
			if dump := storedSession(t, f, ss[0].ID); dump == "" || strings.Contains(dump, tok) {
				t.Errorf("stored session %q: want present and without the token", dump)
			}
		}},
		{name: "idle sessions expire; each request slides the expiry", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			tok := f.e.access(t, f.e.freshUser(t))
			f.e.clock.Advance(29 * time.Minute)
			want(t, f.e.use(t, tok), 200, 0) // expiry now 59m
			f.e.clock.Advance(29 * time.Minute)
			want(t, f.e.use(t, tok), 200, 0) // 58m: expiry 88m
			f.e.clock.Advance(30 * time.Minute)
			want(t, f.e.use(t, tok), 401, rpc.CodeTokenInvalid) // 88m: idle for idle_ttl
		}},
		{name: "sliding is capped at max_lifetime", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			tok := f.e.access(t, f.e.freshUser(t))
			for range 4 {
				f.e.clock.Advance(25 * time.Minute)
				want(t, f.e.use(t, tok), 200, 0)
			}
			f.e.clock.Advance(19 * time.Minute) // 1h59m
			want(t, f.e.use(t, tok), 200, 0)
			f.e.clock.Advance(time.Minute) // 2h: created + max_lifetime
			want(t, f.e.use(t, tok), 401, rpc.CodeTokenInvalid)
		}},
		{name: "without sliding the first expiry stays", session: "fixed", run: func(t *testing.T, f *sessionFixture) {
			tok := f.e.access(t, f.e.freshUser(t))
			f.e.clock.Advance(20 * time.Minute)
			want(t, f.e.use(t, tok), 200, 0)
			f.e.clock.Advance(10 * time.Minute)
			want(t, f.e.use(t, tok), 401, rpc.CodeTokenInvalid)
		}},
		{name: "max_concurrent 0 is unlimited", session: "fixed", run: func(t *testing.T, f *sessionFixture) {
			user := f.e.freshUser(t)
			var toks []string
			for range 5 {
				toks = append(toks, f.e.access(t, user))
			}
			for _, tok := range toks {
				want(t, f.e.use(t, tok), 200, 0)
			}
		}},
		{name: "logout revokes the current session only", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			user := f.e.freshUser(t)
			tok, other := f.e.access(t, user), f.e.access(t, user)
			n := f.rec.count()
			r := f.e.call(t, "logout", nil, svctest.WithToken(tok))
			want(t, r, 200, 0)
			if string(r.Data) != "null" {
				t.Errorf("logout data = %s, want null", r.Data)
			}
			want(t, f.e.use(t, tok), 401, rpc.CodeTokenInvalid)
			want(t, f.e.call(t, "logout", nil, svctest.WithToken(tok)), 401, rpc.CodeTokenInvalid)
			want(t, f.e.use(t, other), 200, 0)
			wantRevocations(t, f.rec.since(n), security.SessionRevocation{SessionID: security.SessionID(tok), UserID: f.e.userID(t, user), Reason: security.RevokeReasonLogout})
		}},
		{name: "evict_oldest revokes the oldest session over max_concurrent", session: "evict", run: func(t *testing.T, f *sessionFixture) {
			user := f.e.freshUser(t)
			first := f.e.access(t, user)
			f.e.clock.Advance(time.Second)
			second := f.e.access(t, user)
			f.e.clock.Advance(time.Second)
			n := f.rec.count()
			third := f.e.access(t, user)
			want(t, f.e.use(t, first), 401, rpc.CodeTokenInvalid)
			want(t, f.e.use(t, second), 200, 0)
			want(t, f.e.use(t, third), 200, 0)
			wantRevocations(t, f.rec.since(n), security.SessionRevocation{SessionID: security.SessionID(first), UserID: f.e.userID(t, user), Reason: security.RevokeReasonEvicted})
			ss, err := f.e.sec.Sessions().List(context.Background(), f.e.userID(t, user))
			if err != nil || len(ss) != 2 || ss[0].ID != security.SessionID(second) || ss[1].ID != security.SessionID(third) {
				t.Errorf("sessions = %+v, %v; want second and third, oldest first", ss, err)
			}
		}},
		{name: "reject refuses a login over max_concurrent with 403/1024", session: "reject", run: func(t *testing.T, f *sessionFixture) {
			user := f.e.freshUser(t)
			first, second := f.e.access(t, user), f.e.access(t, user)
			r := f.e.call(t, "login", map[string]any{"type": "password", "principal": user, "credentials": alicePassword})
			want(t, r, 403, rpc.CodeTooManyConcurrentSessions)
			want(t, f.e.use(t, first), 200, 0)
			want(t, f.e.call(t, "logout", nil, svctest.WithToken(first)), 200, 0)
			want(t, f.e.use(t, f.e.access(t, user)), 200, 0)
			want(t, f.e.use(t, second), 200, 0)
		}},
		{name: "expired sessions do not count toward max_concurrent", session: "reject", run: func(t *testing.T, f *sessionFixture) {
			user := f.e.freshUser(t)
			f.e.access(t, user)
			f.e.access(t, user)
			f.e.clock.Advance(31 * time.Minute)
			want(t, f.e.use(t, f.e.access(t, user)), 200, 0)
		}},
		{name: "forced logout through the Go API", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			ctx := context.Background()
			user := f.e.freshUser(t)
			id := f.e.userID(t, user)
			a, b, c := f.e.access(t, user), f.e.access(t, user), f.e.access(t, user)
			n := f.rec.count()
			sessions := f.e.sec.Sessions()
			if ok, err := sessions.Revoke(ctx, security.SessionID(a)); !ok || err != nil {
				t.Fatalf("Revoke = %v, %v; want true", ok, err)
			}
			if ok, err := sessions.Revoke(ctx, security.SessionID(a)); ok || err != nil {
				t.Errorf("second Revoke = %v, %v; want false, nil", ok, err)
			}
			want(t, f.e.use(t, a), 401, rpc.CodeTokenInvalid)
			want(t, f.e.use(t, b), 200, 0)
			if got, err := sessions.Get(ctx, security.SessionID(b)); err != nil || got == nil || got.UserID != id {
				t.Errorf("Get(b) = %+v, %v; want the live session", got, err)
			}
			if n, err := sessions.RevokeUser(ctx, id); n != 2 || err != nil {
				t.Errorf("RevokeUser = %d, %v; want 2", n, err)
			}
			want(t, f.e.use(t, b), 401, rpc.CodeTokenInvalid)
			want(t, f.e.use(t, c), 401, rpc.CodeTokenInvalid)
			if got, err := sessions.Get(ctx, security.SessionID(b)); got != nil || err != nil {
				t.Errorf("Get(revoked) = %+v, %v; want nil", got, err)
			}
			if got := f.rec.since(n); len(got) != 3 || got[0].Reason != security.RevokeReasonForced || got[2].Reason != security.RevokeReasonForced {
				t.Errorf("revocations = %+v, want 3 forced", got)
			}
		}},
		{name: "revoking an expired session reports false and fires no hook", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			user := f.e.freshUser(t)
			tok := f.e.access(t, user)
			n := f.rec.count()
			f.e.clock.Advance(3 * time.Hour) // past max_lifetime, before any purge
			if ok, err := f.e.sec.Sessions().Revoke(context.Background(), security.SessionID(tok)); ok || err != nil {
				t.Errorf("Revoke(expired) = %v, %v; want false, nil", ok, err)
			}
			if got := f.rec.since(n); len(got) != 0 {
				t.Errorf("revocations = %+v, want none", got)
			}
		}},
		{name: "a password change or disable refuses older sessions", session: "sliding", run: func(t *testing.T, f *sessionFixture) {
			ctx := context.Background()
			user, other := f.e.freshUser(t), f.e.freshUser(t)
			tok, otherTok := f.e.access(t, user), f.e.access(t, other)
			f.e.clock.Advance(time.Second)
			if err := f.e.sec.Store().SetPassword(ctx, user, "another long password"); err != nil {
				t.Fatal(err)
			}
			if err := f.e.sec.Store().SetDisabled(ctx, other, true); err != nil {
				t.Fatal(err)
			}
			want(t, f.e.use(t, tok), 401, rpc.CodeTokenInvalid)
			want(t, f.e.use(t, otherTok), 401, rpc.CodeTokenInvalid)
			if got, err := f.e.sec.Sessions().Get(ctx, security.SessionID(tok)); got != nil || err != nil {
				t.Errorf("Get(session before the password change) = %+v, %v; want nil", got, err)
			}
			f.e.clock.Advance(time.Second)
			want(t, f.e.use(t, f.e.login(t, user, "another long password").AccessToken), 200, 0)
		}},
	}
}

// wantRevocations compares hook calls with want.
func wantRevocations(t *testing.T, got []security.SessionRevocation, want ...security.SessionRevocation) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("revocations (-want +got):\n%s", diff)
	}
}

// storedSession returns what the store keeps for a session id, flattened to one string.
func storedSession(t *testing.T, f *sessionFixture, id string) string {
	t.Helper()
	ctx := context.Background()
	if f.b.redis {
		vals, err := svctest.Redis(t).HGetAll(ctx, "svc:session:"+f.e.srv.Config().App.Name+":s:"+id).Result()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(flatten(vals), " ")
	}
	var rows []map[string]any
	if err := f.e.srv.DB().NewSelect().Table("sys_security_session").Where("id = ?", id).Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, row := range rows {
		for k, v := range row {
			parts = append(parts, k+"="+toString(v))
		}
	}
	return strings.Join(parts, " ")
}
