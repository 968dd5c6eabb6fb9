package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"modernc.org/sqlite"
)

// This file holds the SQL that differs between the dialects and that modules write at run
// time: locking clauses, upserts, JSON and date expressions, runtime DDL column types and the
// PostgreSQL-only notification and session features, each behind a name that says what it does
// rather than which database it is.

// ErrNoNotifications is returned by Listen on a database without LISTEN/NOTIFY (see Notifies).
var ErrNoNotifications = errors.New("db: the database has no notifications")

// ForUpdate locks the rows q reads until the transaction ends (FOR UPDATE) on PostgreSQL and
// MySQL/MariaDB; on SQLite it leaves q unchanged: SQLite has no row locks, and an InTx
// transaction holds the database's write lock from its start, so its reads are already
// exclusive.
func (d *DB) ForUpdate(q *bun.SelectQuery) *bun.SelectQuery {
	if d.Kind == config.SQLite {
		return q
	}
	return q.For("UPDATE")
}

// SkipLocked returns the locking clause that claims rows other transactions have not locked:
// "FOR UPDATE SKIP LOCKED" on PostgreSQL and MySQL/MariaDB (MariaDB 10.6 or later), and "" on
// SQLite, whose writers are serialised (see ForUpdate). Append it to a raw SELECT.
func (d *DB) SkipLocked() string {
	if d.Kind == config.SQLite {
		return ""
	}
	return "FOR UPDATE SKIP LOCKED"
}

// ForUpdateSkipLocked adds SkipLocked's clause to a bun select query (no change on SQLite).
func (d *DB) ForUpdateSkipLocked(q *bun.SelectQuery) *bun.SelectQuery {
	if d.Kind == config.SQLite {
		return q
	}
	return q.For("UPDATE SKIP LOCKED")
}

// OnConflictUpdate makes the insert q an upsert: a row that collides with an existing one on the
// unique key of the columns key updates that row's columns set to the values q would have
// inserted (ON CONFLICT (key) DO UPDATE SET c = EXCLUDED.c on PostgreSQL and SQLite; ON
// DUPLICATE KEY UPDATE c = VALUES(c) on MySQL/MariaDB, which finds the key itself). key and set
// are column names written in the code, never input.
func (d *DB) OnConflictUpdate(q *bun.InsertQuery, key []string, set ...string) *bun.InsertQuery {
	if d.Kind == config.MySQL {
		q = q.On("DUPLICATE KEY UPDATE")
		for _, c := range set {
			q = q.Set(c + " = VALUES(" + c + ")")
		}
		return q
	}
	q = q.On("CONFLICT (" + strings.Join(key, ", ") + ") DO UPDATE")
	for _, c := range set {
		q = q.Set(c + " = EXCLUDED." + c)
	}
	return q
}

// WhereJSONText keeps the rows of q whose JSON object in column has the string value at its
// top-level key (column ->> key on PostgreSQL, JSON_UNQUOTE(JSON_EXTRACT(…)) on MySQL/MariaDB,
// json_extract on SQLite). key and value are bound as arguments; a key holding '"' or '\'
// (which cannot name one top-level key in a JSON path) matches nothing.
func (d *DB) WhereJSONText(q *bun.SelectQuery, column, key, value string) *bun.SelectQuery {
	if strings.ContainsAny(key, `"\`) {
		return q.Where("1 = 0")
	}
	path := `$."` + key + `"`
	switch d.Kind {
	case config.Postgres:
		return q.Where("? ->> ? = ?", bun.Ident(column), key, value)
	case config.MySQL:
		return q.Where("JSON_UNQUOTE(JSON_EXTRACT(?, ?)) = ?", bun.Ident(column), path, value)
	default:
		return q.Where("json_extract(?, ?) = ?", bun.Ident(column), path, value)
	}
}

// SecondsBetween returns the SQL expression of the seconds (a floating-point number, with
// fractions) from the time in column expression a to the one in b. a and b are column names or
// expressions written in the code, never input.
func (d *DB) SecondsBetween(a, b string) string {
	switch d.Kind {
	case config.Postgres:
		return "CAST(EXTRACT(EPOCH FROM (" + b + " - " + a + ")) AS DOUBLE PRECISION)"
	case config.MySQL:
		return "TIMESTAMPDIFF(MICROSECOND, " + a + ", " + b + ") / 1000000.0"
	default:
		return "(julianday(" + b + ") - julianday(" + a + ")) * 86400.0"
	}
}

// ColumnType is a column type of runtime DDL (CREATE TABLE issued by a module while it runs,
// not by a migration) whose SQL differs between the dialects. Types every dialect spells alike
// (VARCHAR(n), BIGINT, INTEGER, DECIMAL(p,s), BOOLEAN, DATE) need no ColumnType.
type ColumnType uint8

// Column types of SQLType.
const (
	// TypeTimestamp is a date and time to the microsecond, without time zone: TIMESTAMP
	// (MySQL/MariaDB: DATETIME(6), whose TIMESTAMP ends in 2038 and converts time zones).
	TypeTimestamp ColumnType = iota + 1
	// TypeJSON is a JSON document: JSONB on PostgreSQL, JSON on MySQL/MariaDB, TEXT on SQLite.
	TypeJSON
	// TypeText is text of any length: TEXT (MySQL/MariaDB: LONGTEXT; its TEXT holds 64 KiB).
	TypeText
)

// SQLType is the SQL of column type t on d's dialect.
func (d *DB) SQLType(t ColumnType) string {
	my := d.Kind == config.MySQL
	switch {
	case t == TypeTimestamp && my:
		return "DATETIME(6)"
	case t == TypeTimestamp:
		return "TIMESTAMP"
	case t == TypeJSON && my:
		return "JSON"
	case t == TypeJSON && d.Kind == config.Postgres:
		return "JSONB"
	case my:
		return "LONGTEXT"
	}
	return "TEXT"
}

// UpdateReturning reports whether the database runs UPDATE … RETURNING, data-modifying WITH
// clauses and "= ANY(ARRAY(subquery))" (PostgreSQL), so a claim can be one statement; elsewhere
// it is a SELECT … FOR UPDATE SKIP LOCKED and an UPDATE in one InTx transaction.
func (d *DB) UpdateReturning() bool { return d.Kind == config.Postgres }

// MultiStatementExec reports whether one ExecContext without arguments through idb may carry
// several statements separated by ";" (PostgreSQL's simple protocol), so a batch of rendered
// writes costs one round trip; elsewhere each statement is its own ExecContext.
func MultiStatementExec(idb bun.IDB) bool { return idb.Dialect().Name() == dialect.PG }

// Notifies reports whether the database delivers notifications between sessions (PostgreSQL's
// LISTEN/NOTIFY), for Listen and Notify.
func (d *DB) Notifies() bool { return d.Kind == config.Postgres }

// Notify sends payload on channel through idb (pg_notify): delivered to the listeners when the
// transaction idb belongs to commits, at once outside a transaction. Use it only where Notifies
// holds.
func Notify(ctx context.Context, idb bun.IDB, channel, payload string) error {
	_, err := idb.ExecContext(ctx, "SELECT pg_notify(?, ?)", channel, payload)
	return err
}

// Listen holds one pooled connection that LISTENs on channel and calls fn with the payload of
// every notification, until ctx ends (it then returns nil) or the connection fails (it returns
// the error; run it again after a back-off). It unlistens before giving the connection back. On
// a database without notifications it returns ErrNoNotifications.
func (d *DB) Listen(ctx context.Context, channel string, fn func(payload string)) error {
	if !d.Notifies() {
		return ErrNoNotifications
	}
	conn, err := d.DB.DB.Conn(ctx)
	if err != nil {
		return listenError(ctx, err)
	}
	defer func() { _ = conn.Close() }()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("db: listen: driver connection %T is not pgx", dc)
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, `LISTEN "`+strings.ReplaceAll(channel, `"`, `""`)+`"`); err != nil {
			return listenError(ctx, err)
		}
		defer func() {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_, _ = pc.Exec(uctx, "UNLISTEN *")
		}()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				return listenError(ctx, err)
			}
			fn(n.Payload)
		}
	})
}

// listenError is nil when ctx ended (the listener was asked to stop), err otherwise.
func listenError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("db: listen: %w", err)
}

// AsyncCommitConn returns a connection of the pool whose commits do not wait for the write-ahead
// log to reach the disk (PostgreSQL's synchronous_commit off), for writes whose loss in a
// database crash only repeats work; nil (and no error) on a database without the setting, where
// the caller uses the pool. The caller owns the connection: it must never return to the pool
// with the setting, so close it with DiscardConn.
func (d *DB) AsyncCommitConn(ctx context.Context) (*bun.Conn, error) {
	if d.Kind != config.Postgres {
		return nil, nil
	}
	conn, err := d.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "SET synchronous_commit = off"); err != nil {
		DiscardConn(&conn)
		return nil, err
	}
	return &conn, nil
}

// DiscardConn closes conn and makes database/sql drop its driver connection instead of pooling
// it (a session whose settings must not reach other users of the pool).
func DiscardConn(conn *bun.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

// QueryInReadOnlyTx runs the query q (someone else's SQL, with args) on a connection of its own
// in a read-only transaction (PostgreSQL, MySQL/MariaDB: SET TRANSACTION READ ONLY; SQLite: a
// deferred transaction with PRAGMA query_only on, lifted when it ends) that is always rolled
// back, and scans at most maxRows rows and byteCap bytes (ScanRows). It is a courtesy for a pool
// the caller may write through anyway; ReadOnly is the runner that enforces read-only.
func (d *DB) QueryInReadOnlyTx(ctx context.Context, q string, args []any, maxRows int, byteCap int64) (*Rows, error) {
	conn, err := d.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	if d.Kind == config.SQLite {
		if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
			return nil, err
		}
		defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA query_only = 0") }()
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // on SQLite a deferred BEGIN, not IMMEDIATE
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return ScanRows(rows, maxRows, byteCap)
}

// ServerVersion reads the database server's version text (SQLite: the library's version).
func (d *DB) ServerVersion(ctx context.Context) (string, error) {
	q := "SELECT version()"
	if d.Kind == config.SQLite {
		q = "SELECT sqlite_version()"
	}
	var v string
	err := d.QueryRowContext(ctx, q).Scan(&v)
	return v, err
}

// SystemName is the OpenTelemetry db.system.name of the database: "postgresql", "mysql" (MySQL
// and MariaDB) or "sqlite".
func (d *DB) SystemName() string { return SystemName(d.Kind) }

// SystemName is the OpenTelemetry db.system.name of a data source type.
func SystemName(k config.DBKind) string {
	if k == config.Postgres {
		return "postgresql"
	}
	return string(k)
}

// DeclaredKind reports whether kind names a data source type the spec declares (§8.3):
// postgres, mysql, sqlite, and oracle and sqlserver, which Open refuses with
// ErrUnsupportedDBKind.
func DeclaredKind(kind string) bool {
	switch config.DBKind(kind) {
	case config.Postgres, config.MySQL, config.SQLite, config.Oracle, config.SQLServer:
		return true
	}
	return false
}

// IsUndefinedObject reports whether err (or an error it wraps) says that a table or column the
// statement names does not exist: PostgreSQL's undefined_table and undefined_column, MySQL's
// unknown table (1051, 1109, 1146) and unknown column (1054), SQLite's "no such table" and "no
// such column".
func IsUndefinedObject(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code == "42P01" || pgErr.Code == "42703"
	}
	if myErr, ok := errors.AsType[*mysql.MySQLError](err); ok {
		switch myErr.Number {
		case 1051, 1054, 1109, 1146:
			return true
		}
		return false
	}
	if liteErr, ok := errors.AsType[*sqlite.Error](err); ok {
		msg := liteErr.Error()
		return strings.Contains(msg, "no such table") || strings.Contains(msg, "no such column")
	}
	return false
}

// Variants holds one value per dialect, for code that is written once per dialect as a whole
// (a module's catalog queries, like its migrations directories). Variant picks the one of a
// database.
type Variants[T any] struct {
	Postgres, MySQL, SQLite T
}

// Variant returns v's value for d's dialect; ErrUnsupportedDBKind for another kind.
func Variant[T any](d *DB, v Variants[T]) (T, error) {
	switch d.Kind {
	case config.Postgres:
		return v.Postgres, nil
	case config.MySQL:
		return v.MySQL, nil
	case config.SQLite:
		return v.SQLite, nil
	}
	var zero T
	return zero, fmt.Errorf("db: data source type %q: %w", d.Kind, ErrUnsupportedDBKind)
}
