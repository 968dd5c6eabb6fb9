package svc_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/svctest"
)

func TestStartFailsFastOnUnreachablePostgres(t *testing.T) {
	cfg := svctest.Config(t, config.SQLite)
	cfg.DataSources[config.PrimaryDataSource] = config.DataSource{
		Type: config.Postgres, Host: "127.0.0.1", Port: 1, User: "svc", Password: "hunter2-secret",
		Database: "svc", SSLMode: config.SSLDisable,
	}
	srv, err := svc.New(cfg, svc.WithLogger(svctest.Logger()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err = srv.Start(ctx)
	if err == nil {
		t.Fatal("Start succeeded against an unreachable PostgreSQL")
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("Start took %s to fail, want it to fail fast", took)
	}
	if msg := err.Error(); !strings.Contains(msg, "primary") || strings.Contains(msg, "hunter2") {
		t.Errorf("error = %q, want it to name the data source and hide the password", msg)
	}
}

func TestNewReturnsStartupErrors(t *testing.T) {
	cfg := svctest.Config(t, config.SQLite)
	cfg.Security.TokenType = "paseto"
	if _, err := svc.New(cfg); !errors.Is(err, config.ErrInvalidTokenType) {
		t.Errorf("New error = %v, want ErrInvalidTokenType", err)
	}
}

func TestStartRollsBackWhenAModuleFails(t *testing.T) {
	var stopped []string
	boom := errors.New("boom")
	cfg := svctest.Config(t, config.SQLite)
	var primary *db.DB // the primary data source, as the modules got it
	srv, err := svc.New(cfg, svc.WithLogger(svctest.Logger()),
		svc.WithModule(func(d app.Deps) (app.Module, error) {
			primary = d.DB
			return app.Module{Name: "first", Stop: func(context.Context) error { stopped = append(stopped, "first"); return nil }}, nil
		}),
		svc.WithModule(func(app.Deps) (app.Module, error) {
			return app.Module{Name: "second", Start: func(context.Context) error { return boom }}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = srv.Start(context.Background())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "second") {
		t.Fatalf("Start error = %v, want boom naming module second", err)
	}
	if len(stopped) != 1 {
		t.Errorf("modules stopped on rollback = %v, want [first]", stopped)
	}
	if primary == nil || primary.PingContext(context.Background()) == nil {
		t.Error("data sources still open after a failed start")
	}
}

func TestRunServesAndShutsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := svc.New(svctest.Config(t, config.SQLite), svc.WithLogger(svctest.Logger()), svc.WithListener(ln))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	url := "http://" + ln.Addr().String()
	svctest.Eventually(t, 30*time.Second, func() bool {
		resp, err := http.Get(url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, "server never became ready")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v after cancellation, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	svctest.EachDBKind(t, func(t *testing.T, kind config.DBKind) {
		cfg := svctest.Config(t, kind)
		cfg.Storage.AutoMigrate = false
		for i := 0; i < 2; i++ {
			srv, err := svc.New(cfg, svc.WithLogger(svctest.Logger()))
			if err != nil {
				t.Fatal(err)
			}
			applied, err := srv.Migrate(context.Background())
			if err != nil {
				t.Fatalf("Migrate run %d: %v", i+1, err)
			}
			if got := len(applied) > 0; got != (i == 0) {
				t.Errorf("Migrate run %d applied %d migrations; want some on the first run only", i+1, len(applied))
			}
		}
		d, err := db.Open(context.Background(), "primary", cfg.DataSources[config.PrimaryDataSource])
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var modules []string
		err = d.NewSelect().Table("svc_schema_migrations").ColumnExpr("DISTINCT module").
			OrderExpr("module").Scan(context.Background(), &modules)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"event", "security", "storage"} { // the event bus tables too (svc migrate)
			if !slices.Contains(modules, want) {
				t.Errorf("migrated modules = %v, want %s among them", modules, want)
			}
		}
	})
}

func TestHealthAndReadiness(t *testing.T) {
	srv := svctest.New(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		req, _ := http.NewRequest(http.MethodGet, path, nil)
		resp, body := srv.Do(t, req)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %s, want 200", path, resp.StatusCode, body)
		}
	}
}

// TestEveryErrorIsAnEnvelope: on the real server, what no route takes and a panic outside /api
// answer the localized {code, message, data} envelope (wire-core §1.5), in both languages.
func TestEveryErrorIsAnEnvelope(t *testing.T) {
	boom := app.Module{Name: "boom", Routes: []app.Route{{Pattern: "GET /boom",
		Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })}}}
	for _, tt := range []struct {
		lang, method, path string
		status             int
		body, allow        string
	}{
		{"en", "GET", "/nope", 404, `{"code":1200,"message":"Resource not found","data":null}`, ""},
		{"zh-CN", "GET", "/nope", 404, `{"code":1200,"message":"迷路了","data":null}`, ""},
		{"en", "DELETE", "/healthz", 405, `{"code":1900,"message":"Method not allowed","data":null}`, "GET, HEAD"},
		{"zh-CN", "GET", "/boom", 500, `{"code":1900,"message":"出小差了","data":null}`, ""},
		{"en", "GET", "/boom", 500, `{"code":1900,"message":"An unexpected error occurred","data":null}`, ""},
	} {
		srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) { c.I18n.Language = tt.lang }),
			svctest.WithOptions(svc.WithModule(func(app.Deps) (app.Module, error) { return boom, nil })))
		req, _ := http.NewRequest(tt.method, tt.path, nil)
		resp, body := srv.Do(t, req)
		if resp.StatusCode != tt.status || strings.TrimSpace(string(body)) != tt.body || resp.Header.Get("Allow") != tt.allow {
			t.Errorf("%s %s %s = %d %s (Allow %q), want %d %s (Allow %q)", tt.lang, tt.method, tt.path,
				resp.StatusCode, body, resp.Header.Get("Allow"), tt.status, tt.body, tt.allow)
		}
	}
}

// TestAPIResponsesCompress: a large /api answer is gzipped for a client that accepts it, with
// Vary: Accept-Encoding; while the protected body transport is on, compression is off
// altogether (no Vary either; the plain request is refused by the transport, which is fine
// here), as the original (wire-core §1.6).
func TestAPIResponsesCompress(t *testing.T) {
	big := rpc.Resource{Name: "test/big", Ops: []rpc.Op{rpc.Handle("get", func(context.Context, rpc.Call, rpc.NoParams) ([]string, error) {
		return slices.Repeat([]string{"a value that repeats"}, 200), nil
	}, rpc.Public())}}
	for _, protected := range []bool{false, true} {
		srv := svctest.New(t, svctest.WithOptions(svc.WithModule(func(app.Deps) (app.Module, error) {
			return app.Module{Name: "test", Resources: []rpc.Resource{big}}, nil
		})), svctest.WithConfig(func(c *config.Config) {
			c.API.BodyEncoding.Enabled = protected
			c.API.BodyEncoding.Key = "MDEyMzQ1Njc4OWFiY2RlZg==" // 16 bytes
		}))
		req, _ := http.NewRequest(http.MethodPost, "/api", strings.NewReader(`{"resource":"test/big","action":"get","version":"v1"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept-Encoding", "gzip")
		resp, body := srv.Do(t, req)
		gzipped, vary := resp.Header.Get("Content-Encoding") == "gzip", resp.Header.Get("Vary") == "Accept-Encoding"
		if gzipped == protected || vary == protected {
			t.Errorf("protected=%t: status %d, Content-Encoding %q, Vary %q, %d bytes", protected, resp.StatusCode,
				resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"), len(body))
		}
	}
}
