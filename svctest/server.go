// Package svctest is the public test harness of svc: the real boot chain in-process on
// httptest, an RPC client, token minting, a fake clock, Eventually, and a database matrix over
// SQLite (always) and PostgreSQL, MySQL/MariaDB, Redis and S3 when their SVC_TEST_* settings are
// present. With SVC_TEST_REQUIRE_SERVICES=1 a missing service fails the test instead of skipping.
//
// Host applications use it for their own API tests:
//
//	shop := func(d app.Deps) (app.Module, error) {
//		return app.Module{Name: "shop", Resources: []rpc.Resource{myResource}}, nil
//	}
//	srv := svctest.New(t, svctest.WithOptions(svc.WithModule(shop)))
//	resp := srv.Call(t, "shop/order", "create", params, svctest.As(user))
//	if resp.Code != 0 { t.Fatalf("create: %d %s", resp.Code, resp.Message) }
package svctest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
)

// TestSecret is the hex JWT secret of servers built by New, so tokens minted by As verify. It is
// 32 random bytes drawn once per test process: a fixed value would be published with the source,
// and svc refuses every signing secret that appeared in its repository (config.ErrPublicSecret).
var TestSecret = randomSecret()

// randomSecret returns 32 random bytes in hex.
func randomSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("svctest: random test secret: %v", err)) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// Server is a running in-process svc server: the svc.Server and what its Start returned
// (Handler, DB, Security, Push, ...).
type Server struct {
	*svc.Server
	*svc.Running
	// URL is the base URL of the httptest server (no trailing slash).
	URL string
	// HTTP is the underlying httptest server.
	HTTP *httptest.Server
	// Clock is the server's fake clock (nil when the server runs on real time).
	Clock *Clock
	cfg   *config.Config
}

// Option configures New.
type Option func(*setup)

type setup struct {
	kind    config.DBKind
	mutate  []func(*config.Config)
	clock   *Clock
	options []svc.Option
	hooks   []bun.QueryHook
}

// WithDB selects the kind of the primary data source (default SQLite). PostgreSQL and MySQL are
// skipped — or fail under SVC_TEST_REQUIRE_SERVICES=1 — when their SVC_TEST_* DSN is not set.
func WithDB(kind config.DBKind) Option { return func(s *setup) { s.kind = kind } }

// WithConfig changes the configuration before the server is built. It runs after the harness's
// defaults (memory storage, every auto_migrate on, TestSecret).
func WithConfig(f func(*config.Config)) Option {
	return func(s *setup) { s.mutate = append(s.mutate, f) }
}

// WithClock runs the server on a fake clock.
func WithClock(c *Clock) Option { return func(s *setup) { s.clock = c } }

// WithOptions passes host options (resources, modules, strategies, ...) to svc.New.
func WithOptions(opts ...svc.Option) Option {
	return func(s *setup) { s.options = append(s.options, opts...) }
}

// WithQueryHook installs h on the primary database before the server starts (db.DB.UseQueryHook
// must not race with queries, and a running server's workers query at any time): how tests and
// benchmarks count or read the statements the server runs.
func WithQueryHook(h bun.QueryHook) Option {
	return func(s *setup) { s.hooks = append(s.hooks, h) }
}

// New boots a server with the default boot chain on a fresh isolated database and serves it on
// httptest until the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	st := setup{kind: config.SQLite}
	for _, o := range opts {
		o(&st)
	}
	cfg := Config(t, st.kind)
	for _, f := range st.mutate {
		f(cfg)
	}
	svcOpts := []svc.Option{svc.WithLogger(Logger())}
	if st.clock != nil {
		svcOpts = append(svcOpts, svc.WithClock(st.clock.Now))
	}
	if len(st.hooks) > 0 {
		svcOpts = append(svcOpts, svc.WithModule(func(d app.Deps) (app.Module, error) {
			for _, h := range st.hooks {
				d.DB.UseQueryHook(h) // every module shares this *db.DB; nothing runs before Start

			}
			return app.Module{Name: "svctest.queryhooks"}, nil
		}))
	}
	srv, err := svc.New(cfg, append(svcOpts, st.options...)...)
	if err != nil {
		t.Fatalf("svctest: svc.New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	running, err := srv.Start(ctx)
	if err != nil {
		t.Fatalf("svctest: start: %v", err)
	}
	hs := httptest.NewServer(running.Handler())
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("svctest: stop: %v", err)
		}
	})
	return &Server{Server: srv, Running: running, URL: hs.URL, HTTP: hs, Clock: st.clock, cfg: cfg}
}

// Config returns the harness's base configuration for a primary data source of kind on a fresh
// isolated database: defaults applied, port 0 (unused under httptest), memory storage, every
// module's auto_migrate on and the process's random TestSecret.
func Config(t testing.TB, kind config.DBKind) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.App.Port = 1
	cfg.DataSources = map[string]config.DataSource{config.PrimaryDataSource: DataSource(t, kind)}
	cfg.Security.Secret = TestSecret
	cfg.Storage.Provider = config.StorageMemory
	cfg.Storage.AutoMigrate = true
	cfg.Cron.Store.AutoMigrate = true
	cfg.Integration.AutoMigrate = true
	cfg.Approval.AutoMigrate = true
	cfg.Audit.AutoMigrate = true
	return cfg
}

// Logger is the logger of harness servers: silent unless SVC_TEST_LOG is set (to a level such
// as debug), then JSON on stderr.
func Logger() *slog.Logger {
	lv := os.Getenv("SVC_TEST_LOG")
	if lv == "" {
		return slog.New(slog.DiscardHandler)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(lv)); err != nil {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// EachDBKind runs fn as a subtest per database kind: sqlite always, postgres and mysql when
// their SVC_TEST_* DSN is set (see DataSource for the skip/fail rule).
func EachDBKind(t *testing.T, fn func(t *testing.T, kind config.DBKind)) {
	t.Helper()
	for _, kind := range []config.DBKind{config.SQLite, config.Postgres, config.MySQL} {
		t.Run(string(kind), func(t *testing.T) { fn(t, kind) })
	}
}
