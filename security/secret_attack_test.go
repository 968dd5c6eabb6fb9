package security_test

import (
	"context"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

// oldSampleSecret is the public secret configs/application.toml shipped before issue #11.
const oldSampleSecret = "737663207075626c69632073616d706c65207365637265742c206368616e6765206d65"

// noSecret runs the server without svc.security.secret, as the shipped configuration does.
func noSecret() envOption { return withCfg(func(c *config.Config) { c.Security.Secret = "" }) }

// onDataSource points the server at ds (to share or reuse one database).
func onDataSource(ds config.DataSource) envOption {
	return withCfg(func(c *config.Config) { c.DataSources[config.PrimaryDataSource] = ds })
}

// TestShippedConfigHasNoForgeableSecret (issue #11 item 1): the shipped configuration carries no
// secret; a server started from it refuses an admin token forged with the old sample secret
// (ten-year or ordinary lifetime); and a configuration naming the old sample secret does not
// start.
func TestShippedConfigHasNoForgeableSecret(t *testing.T) {
	t.Parallel()
	shipped, _, err := config.Load(config.LoadOptions{Path: "../configs/application.toml", Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if shipped.Security.Secret != "" {
		t.Fatal("configs/application.toml ships a signing secret")
	}
	e := newEnv(t, withCfg(func(c *config.Config) {
		ds, roles := c.DataSources, c.Security.Roles
		*c = *shipped
		c.DataSources, c.Security.Roles, c.Storage.Provider = ds, roles, config.StorageMemory
	}))
	e.addUser(t, "alice", alicePassword, "admin")
	want(t, e.use(t, e.access(t, "alice")), 200, 0)
	key, _ := hex.DecodeString(oldSampleSecret)
	for _, exp := range []time.Time{start.Add(30 * time.Minute), start.AddDate(10, 0, 0)} {
		forged := forge(t, jwt.SigningMethodHS256, key, func(c jwt.MapClaims) { c["exp"] = exp.Unix() })
		want(t, e.use(t, forged), 401, rpc.CodeTokenInvalid)
	}

	cfg := svctest.Config(t, config.SQLite)
	cfg.Security.Secret = oldSampleSecret
	if _, err := svc.New(cfg); !errors.Is(err, config.ErrPublicSecret) {
		t.Errorf("svc.New with the old sample secret = %v, want ErrPublicSecret", err)
	}
}

// TestGeneratedSecretSurvivesRestart: without a configured secret, a token issued before a
// restart on the same database is accepted after it (SQLite, PostgreSQL, MariaDB).
func TestGeneratedSecretSurvivesRestart(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		ds := svctest.DataSource(t, kind)
		first := newEnv(t, onDataSource(ds), noSecret())
		user := first.freshUser(t)
		pair := first.login(t, user, alicePassword)
		first.srv.HTTP.Close()
		if err := first.srv.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		second := newEnv(t, onDataSource(ds), noSecret())
		want(t, second.use(t, pair.AccessToken), 200, 0)
		second.clock.Advance(20 * time.Minute) // past refresh_not_before
		want(t, second.call(t, "refresh", map[string]any{"refreshToken": pair.RefreshToken}), 200, 0)
		var n int
		if err := second.srv.DB().NewRaw("SELECT COUNT(*) FROM sys_security_secret").Scan(context.Background(), &n); err != nil || n != 1 {
			t.Errorf("rows in sys_security_secret = %d, %v; want 1", n, err)
		}
	})
}

// TestTwoNodesShareGeneratedSecret: two servers on one PostgreSQL or MariaDB database with no
// configured secret accept each other's tokens.
func TestTwoNodesShareGeneratedSecret(t *testing.T) {
	t.Parallel()
	for _, kind := range []config.DBKind{config.Postgres, config.MySQL} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			a, b := twoNodes(t, cluster{kind: kind}, noSecret())
			user := a.freshUser(t)
			want(t, b.use(t, a.access(t, user)), 200, 0)
			want(t, a.use(t, b.access(t, user)), 200, 0)
		})
	}
}

// TestGeneratedSecretStartRace: two servers started at the same moment on an empty database
// (migrations included) end with the same secret: a token issued by one verifies on the other.
func TestGeneratedSecretStartRace(t *testing.T) {
	t.Parallel()
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		t.Parallel()
		cfg := svctest.Config(t, kind)
		cfg.Security.Secret = ""
		var servers [2]*svc.Server
		var running [2]*svc.Running
		var errs [2]error
		var wg sync.WaitGroup
		gate := make(chan struct{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := range servers {
			srv, err := svc.New(cfg, svc.WithLogger(svctest.Logger()))
			if err != nil {
				t.Fatal(err)
			}
			servers[i] = srv
			wg.Go(func() { <-gate; running[i], errs[i] = srv.Start(ctx) })
		}
		close(gate)
		wg.Wait()
		for i, srv := range servers {
			t.Cleanup(func() { _ = srv.Stop(context.Background()) })
			if errs[i] != nil {
				t.Fatalf("server %d: start: %v", i, errs[i])
			}
		}
		p := svctest.User("racer")
		for i, r := range running {
			pair, err := r.Security().Tokens().Issue(ctx, p)
			if err != nil {
				t.Fatalf("server %d: issue: %v", i, err)
			}
			other := running[1-i]
			if _, err := other.Security().Tokens().Verify(ctx, pair.AccessToken); err != nil {
				t.Errorf("token of server %d refused by server %d: %v", i, 1-i, err)
			}
		}
	})
}
