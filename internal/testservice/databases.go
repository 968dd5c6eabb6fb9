package testservice

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
)

// DBKinds are the database kinds every store test runs on.
var DBKinds = []config.DBKind{config.SQLite, config.Postgres, config.MySQL}

// OpenDB opens ds as data source "primary" and closes it when the test ends (before an isolated
// database or schema of DataSource is dropped, whose clean-up was registered earlier).
func OpenDB(t testing.TB, ds config.DataSource) *db.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	d, err := db.Open(ctx, config.PrimaryDataSource, ds)
	if err != nil {
		t.Fatalf("testservice: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// DataSource returns a data source of kind on storage that belongs to t alone, removed when the
// test ends:
//
//   - sqlite: a new file in t.TempDir();
//   - postgres: a new schema t_<random> in the database of SVC_TEST_POSTGRES_DSN (a URL), used
//     through the data source's schema (search_path), dropped with CASCADE at clean-up;
//   - mysql: a new database t_<random> on the server of SVC_TEST_MYSQL_DSN, dropped at clean-up.
//
// The clean-up is registered before the caller's, so handles the test opens on the data source
// are closed before the drop. A missing DSN skips the test, or fails it (Require).
func DataSource(t testing.TB, kind config.DBKind) config.DataSource {
	t.Helper()
	switch kind {
	case config.SQLite:
		return config.DataSource{Type: config.SQLite, Path: filepath.Join(t.TempDir(), "svc.db")}
	case config.Postgres:
		base, err := postgresBase(Require(t, EnvPostgresDSN))
		if err != nil {
			t.Fatalf("testservice: %s: %v", EnvPostgresDSN, err)
		}
		base.Schema = "t_" + Suffix(8)
		isolate(t, base, "CREATE SCHEMA "+base.Schema, "DROP SCHEMA IF EXISTS "+base.Schema+" CASCADE")
		return base
	case config.MySQL:
		base, err := mysqlBase(Require(t, EnvMySQLDSN))
		if err != nil {
			t.Fatalf("testservice: %s: %v", EnvMySQLDSN, err)
		}
		name := "t_" + Suffix(8)
		isolate(t, base, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
			"DROP DATABASE IF EXISTS "+name)
		base.Database = name
		return base
	default:
		t.Fatalf("testservice: no test database for data source type %q", kind)
		return config.DataSource{}
	}
}

// isolate runs create on the server of admin now and registers drop for the end of the test.
// For PostgreSQL admin carries the new schema, which is harmless: both statements name it fully.
func isolate(t testing.TB, admin config.DataSource, create, drop string) {
	t.Helper()
	isolateAll(t, admin, []string{create}, []string{drop})
}

// adminExec runs one statement on a short-lived connection to ds.
func adminExec(ds config.DataSource, stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	d, err := db.Open(ctx, "testservice-admin", ds)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	if _, err := d.DB.DB.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}

// postgresBase maps a PostgreSQL URL (postgres://user:password@host:port/database?sslmode=…&
// sslrootcert=…) onto a data source.
func postgresBase(dsn string) (config.DataSource, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return config.DataSource{}, err
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return config.DataSource{}, fmt.Errorf("want a postgres:// URL, got scheme %q", u.Scheme)
	}
	port, err := portOf(u.Port())
	if err != nil {
		return config.DataSource{}, err
	}
	password, _ := u.User.Password()
	q := u.Query()
	return config.DataSource{
		Type:        config.Postgres,
		Host:        u.Hostname(),
		Port:        port,
		User:        u.User.Username(),
		Password:    password,
		Database:    u.Path[min(1, len(u.Path)):],
		SSLMode:     config.SSLMode(q.Get("sslmode")),
		SSLRootCert: q.Get("sslrootcert"),
	}, nil
}

// mysqlBase maps a go-sql-driver DSN (user:password@tcp(host:port)/database?…) onto a data
// source. Only plain connections are mapped: the DSN's tls parameter is ignored.
func mysqlBase(dsn string) (config.DataSource, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return config.DataSource{}, err
	}
	ds := config.DataSource{Type: config.MySQL, User: cfg.User, Password: cfg.Passwd, Database: cfg.DBName}
	if cfg.Net == "unix" {
		ds.Host = cfg.Addr
		return ds, nil
	}
	host, portText, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return config.DataSource{}, err
	}
	ds.Host = host
	ds.Port, err = portOf(portText)
	return ds, err
}

// portOf parses a port, "" meaning zero (the driver default).
func portOf(s string) (uint16, error) {
	if s == "" {
		return 0, nil
	}
	p, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("port %q: %w", s, err)
	}
	return uint16(p), nil
}

// EachDB runs fn as the subtests "sqlite", "postgres" and "mysql", each with a database of its
// own (OpenDB over DataSource); a missing service skips its subtest, or fails it when
// SVC_TEST_REQUIRE_SERVICES=1. svctest.EachDB is the same for host applications.
func EachDB(t *testing.T, fn func(t *testing.T, d *db.DB)) {
	t.Helper()
	for _, kind := range DBKinds {
		t.Run(string(kind), func(t *testing.T) { fn(t, OpenDB(t, DataSource(t, kind))) })
	}
}
