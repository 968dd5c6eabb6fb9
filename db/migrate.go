package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
)

// versionTable records applied migrations: one row per (module, version).
const versionTable = "svc_schema_migrations"

// unlockTimeout bounds releasing the migration lock after the caller's context has ended.
const unlockTimeout = 10 * time.Second

// Migrate applies the pending migrations of every set, set by set in the order given and file by
// file in version order, and records each in svc_schema_migrations. All sets are read and checked
// first (ErrInvalidMigrations), so a bad file name, gap or duplicate in any module stops the run
// before anything is applied. Running it again is a no-op, and concurrent runs from several
// processes apply each migration once: they are serialised by pg_advisory_lock (PostgreSQL),
// GET_LOCK (MySQL) or an immediate transaction per file (SQLite). A failing file leaves the files
// before it applied and recorded, and the error names the module and the file.
//
// The common start — an existing database with nothing pending — costs one query and takes no
// lock: every recorded version is read at once and compared with the sets.
func Migrate(ctx context.Context, d *DB, sets ...Migrations) error {
	all, err := loadAll(d.Kind, sets)
	if err != nil {
		return fmt.Errorf("db: migrate data source %q: %w", d.Name, err)
	}
	if applied, err := allApplied(ctx, d.DB); err == nil && len(pending(all, applied)) == 0 {
		return nil
	}
	// The version table is missing (a fresh database) or something is pending: the locked path,
	// which re-reads the versions under the lock, reports any real error.
	err = d.withMigrationConn(ctx, func(conn bun.Conn) error {
		if err := d.ensureVersionTable(ctx, conn); err != nil {
			return err
		}
		applied, err := allApplied(ctx, conn)
		if err != nil {
			return err
		}
		for _, m := range pending(all, applied) {
			if err := d.apply(ctx, conn, m); err != nil {
				return fmt.Errorf("module %q: %s: %w", m.Module, m.File, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("db: migrate data source %q: %w", d.Name, err)
	}
	return nil
}

// Pending lists the migrations of sets that Migrate would apply now, in the order it would apply
// them (for progress output such as `svc migrate`). It takes no lock and creates nothing.
func Pending(ctx context.Context, d *DB, sets ...Migrations) ([]Migration, error) {
	all, err := loadAll(d.Kind, sets)
	if err != nil {
		return nil, fmt.Errorf("db: pending migrations of data source %q: %w", d.Name, err)
	}
	exists, err := d.versionTableExists(ctx)
	if err != nil {
		return nil, fmt.Errorf("db: pending migrations of data source %q: %w", d.Name, err)
	}
	applied := map[string]map[int]bool{}
	if exists {
		if applied, err = allApplied(ctx, d.DB); err != nil {
			return nil, fmt.Errorf("db: pending migrations of data source %q: %w", d.Name, err)
		}
	}
	return pending(all, applied), nil
}

// pending lists the migrations of all whose (module, version) applied does not hold, in order.
func pending(all [][]Migration, applied map[string]map[int]bool) []Migration {
	var out []Migration
	for _, ms := range all {
		for _, m := range ms {
			if !applied[m.Module][m.Version] {
				out = append(out, m)
			}
		}
	}
	return out
}

// allApplied reads every recorded version, by module, in one query.
func allApplied(ctx context.Context, db bun.IConn) (map[string]map[int]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT module, version FROM "+versionTable)
	if err != nil {
		return nil, fmt.Errorf("read applied versions: %w", err)
	}
	defer func() { _ = rows.Close() }()
	applied := map[string]map[int]bool{}
	for rows.Next() {
		var module string
		var v int
		if err := rows.Scan(&module, &v); err != nil {
			return nil, fmt.Errorf("read applied versions: %w", err)
		}
		if applied[module] == nil {
			applied[module] = map[int]bool{}
		}
		applied[module][v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read applied versions: %w", err)
	}
	return applied, nil
}

// withMigrationConn runs fn on one dedicated connection holding the dialect's migration lock,
// then releases the lock. A connection whose lock could not be released is discarded instead of
// being returned to the pool, so the session lock dies with it.
func (d *DB) withMigrationConn(ctx context.Context, fn func(conn bun.Conn) error) (err error) {
	conn, err := d.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connection: %w", err)
	}
	defer func() { _ = conn.Close() }()
	unlock, err := d.lockMigrations(ctx, conn)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		defer cancel()
		if uerr := unlock(uctx); uerr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			err = errors.Join(err, fmt.Errorf("release migration lock: %w", uerr))
		}
	}()
	return fn(conn)
}

// apply runs one file. PostgreSQL and SQLite have transactional DDL: the file and its version
// row commit together, and the version is checked again inside the transaction (on SQLite the
// immediate transaction is the lock between processes). MySQL commits each DDL statement
// implicitly, so the statements run one by one and the version row is written after the last.
func (d *DB) apply(ctx context.Context, conn bun.Conn, m Migration) error {
	if d.Kind == config.MySQL {
		for i, stmt := range splitStatements(m.sql) {
			if _, err := conn.Conn.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("statement %d: %w", i+1, err)
			}
		}
		return d.record(ctx, conn, m)
	}
	return conn.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+versionTable+" WHERE module = ? AND version = ?",
			m.Module, m.Version).Scan(&n); err != nil {
			return fmt.Errorf("check version: %w", err)
		}
		if n > 0 {
			return nil // applied by another process since the list was read
		}
		if _, err := tx.Tx.ExecContext(ctx, m.sql); err != nil {
			return err
		}
		return d.record(ctx, tx, m)
	})
}

// record inserts the version row; applied_at is the database's UTC clock.
func (d *DB) record(ctx context.Context, db bun.IConn, m Migration) error {
	now := map[config.DBKind]string{
		config.Postgres: "now()",
		config.MySQL:    "UTC_TIMESTAMP(6)",
		config.SQLite:   "strftime('%Y-%m-%d %H:%M:%f', 'now')",
	}[d.Kind]
	_, err := db.ExecContext(ctx, "INSERT INTO "+versionTable+" (module, version, name, applied_at) VALUES (?, ?, ?, "+now+")",
		m.Module, m.Version, m.Name)
	if err != nil {
		return fmt.Errorf("record version: %w", err)
	}
	return nil
}

// versionTableExists reports whether svc_schema_migrations exists in the database (and, on
// PostgreSQL, in the schema of the search path).
func (d *DB) versionTableExists(ctx context.Context) (bool, error) {
	var q string
	switch d.Kind {
	case config.Postgres:
		q = "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE schemaname = ? AND tablename = ?"
	case config.MySQL:
		q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
	default:
		q = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	}
	args := []any{versionTable}
	if d.Kind == config.Postgres {
		args = []any{d.Schema, versionTable}
	}
	var n int
	if err := d.QueryRowContext(ctx, q, args...).Scan(&n); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("look up %s: %w", versionTable, err)
	}
	return n > 0, nil
}
