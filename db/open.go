package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/schema"
)

// ErrUnsupportedDBKind is returned by Open for a data source type other than postgres, mysql or
// sqlite (spec §8.3: oracle and sqlserver are declared but fail at startup). It is the config
// package's sentinel, so errors.Is matches whichever layer reported it.
var ErrUnsupportedDBKind = config.ErrUnsupportedDBKind

// pingTimeout bounds the startup ping of a data source; a shorter deadline on the caller's
// context wins.
const pingTimeout = 10 * time.Second

// Pool limits for the client/server engines. database/sql's default (no limit on open
// connections) lets a burst exhaust the server's max_connections, so the pool is capped. Every
// open connection may stay idle: database/sql closes a returned connection beyond the idle limit
// at once, so a lower limit makes a load that keeps more connections busy than that open and
// close them continuously — on PostgreSQL each a new backend process that rebuilds its catalog
// caches (bench/approval/run.sh: with 10 idle of 25, 16 clients opened 87 connections in 14 s;
// with all 25 idle, none after the first fill, and about a tenth more instances per second). An
// unused pool shrinks after serverConnMaxIdleTime.
const (
	serverMaxOpenConns    = 25
	serverMaxIdleConns    = serverMaxOpenConns
	serverConnMaxIdleTime = 5 * time.Minute
	serverConnMaxLifetime = time.Hour
)

// Open opens the data source ds under the given name, pings it within pingTimeout and returns
// it wrapped in a bun.DB of the matching dialect. Errors name the data source and never contain
// its password. Oracle, SQL Server and unknown types fail with ErrUnsupportedDBKind.
func Open(ctx context.Context, name string, ds config.DataSource) (*DB, error) {
	d, err := open(ctx, name, ds)
	if err != nil {
		return nil, redact(fmt.Errorf("db: data source %q (%s): %w", name, ds.Type, err), ds.Password)
	}
	return d, nil
}

func open(ctx context.Context, name string, ds config.DataSource) (*DB, error) {
	var (
		sqldb   *sql.DB
		dialect schema.Dialect
		schema  string
		err     error
	)
	switch ds.Type {
	case config.Postgres:
		schema = ds.Schema
		if schema == "" {
			schema = "public"
		}
		sqldb, err = openPostgres(ds, schema)
		dialect = pgdialect.New()
	case config.MySQL:
		sqldb, err = openMySQL(ds)
		dialect = mysqldialect.New()
	case config.SQLite:
		sqldb, err = openSQLite(ds)
		dialect = sqlitedialect.New()
	default:
		return nil, ErrUnsupportedDBKind
	}
	if err != nil {
		return nil, err
	}
	if ds.Type != config.SQLite {
		sqldb.SetMaxOpenConns(serverMaxOpenConns)
		sqldb.SetMaxIdleConns(serverMaxIdleConns)
		sqldb.SetConnMaxIdleTime(serverConnMaxIdleTime)
		sqldb.SetConnMaxLifetime(serverConnMaxLifetime)
	}
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := sqldb.PingContext(pingCtx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("ping: %w", err)
	}
	d := &DB{
		DB:       bun.NewDB(sqldb, dialect),
		Name:     name,
		Kind:     ds.Type,
		Schema:   schema,
		SQLGuard: ds.EnableSQLGuard,
	}
	if ds.Type == config.SQLite {
		d.writer = writerLock(ds.Path)
		d.Path = ds.Path
	}
	return d, nil
}

// OpenAll opens every data source of svc.data_sources, "primary" first and the others in name
// order. It fails with config.ErrMissingPrimaryDataSource when "primary" is missing, and on any failure closes what it
// had opened before returning the error.
func OpenAll(ctx context.Context, sources map[string]config.DataSource) (map[string]*DB, error) {
	if _, ok := sources[config.PrimaryDataSource]; !ok {
		return nil, fmt.Errorf("db: svc.data_sources.%s: %w", config.PrimaryDataSource, config.ErrMissingPrimaryDataSource)
	}
	names := slices.Sorted(maps.Keys(sources))
	names = slices.DeleteFunc(names, func(n string) bool { return n == config.PrimaryDataSource })
	names = append([]string{config.PrimaryDataSource}, names...)
	opened := make(map[string]*DB, len(names))
	for _, name := range names {
		d, err := Open(ctx, name, sources[name])
		if err != nil {
			_ = CloseAll(opened)
			return nil, err
		}
		opened[name] = d
	}
	return opened, nil
}

// CloseAll closes every database of dbs and returns the joined close errors.
func CloseAll(dbs map[string]*DB) error {
	var errs []error
	for name, d := range dbs {
		if err := d.Close(); err != nil {
			errs = append(errs, fmt.Errorf("db: close data source %q: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// redactedError carries an error message with the password removed while keeping the cause
// reachable through errors.Is and errors.As.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }

// redact returns err with every occurrence of password (plain and URL-escaped) in its message
// replaced. Driver messages normally leave the password out; this guarantees it.
func redact(err error, password string) error {
	if err == nil || password == "" {
		return err
	}
	msg := err.Error()
	for _, form := range []string{password, url.QueryEscape(password), url.PathEscape(password), url.UserPassword("u", password).String()[2:]} {
		if form != "" {
			msg = strings.ReplaceAll(msg, form, "xxxxx")
		}
	}
	return &redactedError{msg: msg, cause: err}
}
