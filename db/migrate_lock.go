package db

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"

	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
)

// mysqlLockWaitSeconds is how long GET_LOCK waits for another process's migration run; the
// caller's context usually ends the wait first (the driver then drops the session).
const mysqlLockWaitSeconds = 3600

// mysqlLockName is the GET_LOCK name: lock names are server-wide, so it is derived from the
// current database, hashed to stay under the 64-character limit.
const mysqlLockName = "CONCAT('svc_migrate_', MD5(DATABASE()))"

// versionTableDDL returns the CREATE TABLE of svc_schema_migrations for a dialect.
func versionTableDDL(kind config.DBKind) string {
	switch kind {
	case config.Postgres:
		return `CREATE TABLE IF NOT EXISTS ` + versionTable + ` (
	module VARCHAR(128) NOT NULL,
	version INTEGER NOT NULL,
	name VARCHAR(255) NOT NULL,
	applied_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (module, version)
)`
	case config.MySQL:
		return `CREATE TABLE IF NOT EXISTS ` + versionTable + ` (
	module VARCHAR(128) NOT NULL,
	version INT NOT NULL,
	name VARCHAR(255) NOT NULL,
	applied_at DATETIME(6) NOT NULL,
	PRIMARY KEY (module, version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`
	default:
		return `CREATE TABLE IF NOT EXISTS ` + versionTable + ` (
	module TEXT NOT NULL,
	version INTEGER NOT NULL,
	name TEXT NOT NULL,
	applied_at TEXT NOT NULL,
	PRIMARY KEY (module, version)
)`
	}
}

// pgLockKey is the pg_advisory_lock key. Advisory locks are per database, so the key only has to
// tell schemas apart: migrations of different schemas of one database do not wait for each other.
func pgLockKey(schema string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(versionTable + ":" + schema))
	return int64(h.Sum64()) //nolint:gosec // any 64-bit value is a valid key
}

// lockMigrations takes the dialect's migration lock on conn and returns its release. SQLite has
// no session lock: every file runs in its own BEGIN IMMEDIATE transaction that re-checks the
// version, and the database write lock serialises those transactions across processes.
func (d *DB) lockMigrations(ctx context.Context, conn bun.Conn) (func(context.Context) error, error) {
	switch d.Kind {
	case config.Postgres:
		key := pgLockKey(d.Schema)
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", key); err != nil {
			return nil, err
		}
		return func(ctx context.Context) error {
			var released bool
			if err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock(?)", key).Scan(&released); err != nil {
				return err
			}
			if !released {
				return fmt.Errorf("advisory lock %d was not held", key)
			}
			return nil
		}, nil
	case config.MySQL:
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK("+mysqlLockName+", ?)", mysqlLockWaitSeconds).Scan(&got); err != nil {
			return nil, err
		}
		if !got.Valid || got.Int64 != 1 {
			return nil, fmt.Errorf("GET_LOCK: not granted within %d s", mysqlLockWaitSeconds)
		}
		return func(ctx context.Context) error {
			var released sql.NullInt64
			if err := conn.QueryRowContext(ctx, "SELECT RELEASE_LOCK("+mysqlLockName+")").Scan(&released); err != nil {
				return err
			}
			if !released.Valid || released.Int64 != 1 {
				return fmt.Errorf("RELEASE_LOCK: lock was not held")
			}
			return nil
		}, nil
	default:
		return func(context.Context) error { return nil }, nil
	}
}

// ensureVersionTable creates svc_schema_migrations (and, on PostgreSQL, the configured schema when
// it does not exist yet). It runs under the migration lock, so concurrent runs do not race on DDL.
func (d *DB) ensureVersionTable(ctx context.Context, conn bun.Conn) error {
	if d.Kind == config.Postgres {
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM pg_catalog.pg_namespace WHERE nspname = ?", d.Schema).Scan(&n); err != nil {
			return fmt.Errorf("look up schema %q: %w", d.Schema, err)
		}
		if n == 0 {
			if _, err := conn.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS ?", bun.Ident(d.Schema)); err != nil {
				return fmt.Errorf("create schema %q: %w", d.Schema, err)
			}
		}
	}
	if _, err := conn.Conn.ExecContext(ctx, versionTableDDL(d.Kind)); err != nil {
		return fmt.Errorf("create %s: %w", versionTable, err)
	}
	return nil
}
