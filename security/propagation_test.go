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

// propagation is the bound of security/doc.go: a change made by another server or by the CLI
// reaches every server within one second.
const propagation = time.Second

// refusedWithin waits until token is refused (401/1003) on e, failing the test after the
// propagation bound.
func (e *env) refusedWithin(t *testing.T, token string) {
	t.Helper()
	svctest.Eventually(t, propagation, func() bool {
		r := e.use(t, token)
		return r.Status == 401 && r.Code == rpc.CodeTokenInvalid
	}, "token still accepted after the propagation bound")
}

// cli is what `svc user …` and `svc session …` do: the store and sessions of a separate
// process, opened on the same database (security.OpenStore, security.OpenSessions), on e's
// clock so that e's sessions are live for it.
func cli(t *testing.T, e *env) (*security.Store, *security.Sessions) {
	t.Helper()
	cfg := e.srv.Config()
	d := e.srv.DB()
	return security.OpenStore(d, cfg.Security, cheapHash, e.clock.Now), security.OpenSessions(cfg, d, nil, e.clock.Now)
}

// eachSharedDB runs fn on two JWT nodes sharing a fresh database of every kind that another
// process can share: PostgreSQL (also with Redis publish/subscribe), MariaDB and a SQLite file.
func eachSharedDB(t *testing.T, fn func(t *testing.T, c cluster)) {
	t.Helper()
	for _, c := range []cluster{{config.Postgres, true}, {config.Postgres, false}, {config.MySQL, false}, {config.SQLite, false}} {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			fn(t, c)
		})
	}
}

// TestPropagationJWT, on two nodes and the CLI: logout, refresh-token reuse, disabling a user,
// removing a role and a password change made on one node (or by the CLI) are in force on the
// other node within the propagation bound, on tokens already issued (issues #11 and #13).
func TestPropagationJWT(t *testing.T) {
	eachSharedDB(t, func(t *testing.T, c cluster) {
		a, b := twoNodes(t, c, withResources(permResource()))
		ctx := context.Background()
		store, _ := cli(t, a)

		// logout on A: the access token is refused on A at once, on B within the bound
		a.addUser(t, "paul", alicePassword, "ops")
		tok := a.login(t, "paul", alicePassword).AccessToken
		want(t, b.use(t, tok), 200, 0)
		want(t, a.call(t, "logout", nil, svctest.WithToken(tok)), 200, 0)
		want(t, a.use(t, tok), 401, rpc.CodeTokenInvalid)
		b.refusedWithin(t, tok)

		// refresh-token reuse on B denies the family's access tokens on A
		pair := a.login(t, "paul", alicePassword)
		want(t, b.use(t, pair.AccessToken), 200, 0)
		want(t, a.use(t, pair.AccessToken), 200, 0)
		for _, n := range []*env{a, b} {
			n.clock.Advance(15*time.Minute + time.Second)
		}
		want(t, b.call(t, "refresh", map[string]any{"refreshToken": pair.RefreshToken}), 200, 0)
		want(t, b.call(t, "refresh", map[string]any{"refreshToken": pair.RefreshToken}), 401, rpc.CodeTokenInvalid)
		want(t, b.use(t, pair.AccessToken), 401, rpc.CodeTokenInvalid)
		a.refusedWithin(t, pair.AccessToken)

		// a role removed by the CLI stops working on both nodes; one given back works again
		tok = a.login(t, "paul", alicePassword).AccessToken
		for _, n := range []*env{a, b} {
			want(t, n.srv.Call(t, "test/perm", "cron", nil, svctest.WithToken(tok)), 200, 0)
		}
		if err := store.SetRoles(ctx, "paul", []string{"viewer"}); err != nil {
			t.Fatal(err)
		}
		for _, n := range []*env{a, b} {
			svctest.Eventually(t, propagation, func() bool {
				r := n.srv.Call(t, "test/perm", "cron", nil, svctest.WithToken(tok))
				return r.Status == 403
			}, "removed role still grants cron.run")
		}
		if err := a.sec.Store().SetRoles(ctx, "paul", []string{"ops"}); err != nil {
			t.Fatal(err)
		}
		want(t, a.srv.Call(t, "test/perm", "cron", nil, svctest.WithToken(tok)), 200, 0)
		svctest.Eventually(t, propagation, func() bool {
			return b.srv.Call(t, "test/perm", "cron", nil, svctest.WithToken(tok)).Status == 200
		}, "role given back on A not in force on B")

		// disabling by the CLI refuses the token everywhere; so does a password change on B
		want(t, b.use(t, tok), 200, 0)
		if err := store.SetDisabled(ctx, "paul", true); err != nil {
			t.Fatal(err)
		}
		a.refusedWithin(t, tok)
		b.refusedWithin(t, tok)

		a.addUser(t, "quinn", alicePassword)
		for _, n := range []*env{a, b} {
			n.clock.Advance(2 * time.Second) // the new password's tokens_valid_after is after this token
		}
		tok = a.login(t, "quinn", alicePassword).AccessToken
		want(t, a.use(t, tok), 200, 0)
		for _, n := range []*env{a, b} {
			n.clock.Advance(2 * time.Second)
		}
		if err := b.sec.Store().SetPassword(ctx, "quinn", "another-"+alicePassword); err != nil {
			t.Fatal(err)
		}
		a.refusedWithin(t, tok)
	})
}

// TestPropagationSessions: with opaque sessions in the database, a forced logout by the CLI
// (`svc session revoke`) is refused on both nodes within the bound, although both serve the
// session from their cache.
func TestPropagationSessions(t *testing.T) {
	for _, kind := range []config.DBKind{config.Postgres, config.MySQL, config.SQLite} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			a, b := twoNodes(t, cluster{kind: kind}, opaque(nil))
			_, sessions := cli(t, a)
			user := a.freshUser(t)
			one, two := a.access(t, user), b.access(t, user)
			for _, n := range []*env{a, b} {
				want(t, n.use(t, one), 200, 0)
				want(t, n.use(t, two), 200, 0)
			}
			if ok, err := sessions.Revoke(context.Background(), security.SessionID(one)); !ok || err != nil {
				t.Fatalf("CLI Revoke = %v, %v", ok, err)
			}
			a.refusedWithin(t, one)
			b.refusedWithin(t, one)
			if n, err := sessions.RevokeUser(context.Background(), a.userID(t, user)); n != 1 || err != nil {
				t.Fatalf("CLI RevokeUser = %d, %v; want 1", n, err)
			}
			a.refusedWithin(t, two)
			b.refusedWithin(t, two)
		})
	}
}

// permResource is test/perm: action cron requires cron.run (granted by role ops, cron.*).
func permResource() rpc.Resource {
	ok := func(context.Context, rpc.Call, rpc.NoParams) (bool, error) { return true, nil }
	return rpc.Resource{Name: "test/perm", Ops: []rpc.Op{rpc.Handle("cron", ok, rpc.RequiredPermission("cron.run"))}}
}

// TestConcurrentLogouts, on every database: logouts arriving together are written in shared
// transactions (group commit); every one answers 200, and afterwards every access and refresh
// token of those logins is refused.
func TestConcurrentLogouts(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		e := newEnv(t, onDB(kind))
		e.addUser(t, "lou", alicePassword)
		const n = 24
		pairs := make([]security.AuthTokens, n)
		for i := range pairs {
			pairs[i] = e.login(t, "lou", alicePassword)
		}
		var wg sync.WaitGroup
		for _, p := range pairs {
			wg.Go(func() {
				if r := e.call(t, "logout", nil, svctest.WithToken(p.AccessToken)); r.Status != 200 || r.Code != 0 {
					t.Errorf("logout: %d/%d %s", r.Status, r.Code, r.Message)
				}
			})
		}
		wg.Wait()
		e.clock.Advance(15*time.Minute + time.Second)
		for _, p := range pairs {
			want(t, e.use(t, p.AccessToken), 401, rpc.CodeTokenInvalid)
			want(t, e.call(t, "refresh", map[string]any{"refreshToken": p.RefreshToken}), 401, rpc.CodeTokenInvalid)
		}
	})
}
