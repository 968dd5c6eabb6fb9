package db

import (
	"context"
	"errors"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLSTATE codes (PostgreSQL) and server error numbers (MySQL/MariaDB) of constraint violations.
const (
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"

	myDupEntry            = 1062 // ER_DUP_ENTRY
	myDupEntryWithKeyName = 1586 // ER_DUP_ENTRY_WITH_KEY_NAME
	myRowIsReferenced     = 1451 // ER_ROW_IS_REFERENCED_2: delete/update of a referenced parent
	myNoReferencedRow     = 1452 // ER_NO_REFERENCED_ROW_2: child points at a missing parent
	myRowIsReferencedOld  = 1217 // ER_ROW_IS_REFERENCED
	myNoReferencedRowOld  = 1216 // ER_NO_REFERENCED_ROW
)

// InTx runs fn in one transaction: committed when fn returns nil, rolled back when it returns an
// error or panics. It makes a single attempt and never retries, because fn may have effects
// outside the database; callers that know fn is safe to repeat retry themselves. On SQLite the
// transaction starts with BEGIN IMMEDIATE, so it waits for the write lock (busy_timeout) at the
// start instead of failing with SQLITE_BUSY when it first writes.
func (d *DB) InTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return d.RunInTx(ctx, nil, fn)
}

// SkipLocked returns the locking clause that claims rows other transactions have not locked:
// "FOR UPDATE SKIP LOCKED" on PostgreSQL and MySQL/MariaDB (MariaDB 10.6 or later), and "" on
// SQLite, which has no row locks: its writers are serialised by the database lock, so a claim
// made in an InTx transaction is already exclusive. Append it to a raw SELECT.
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

// IsUniqueViolation reports whether err (or an error it wraps) is a unique or primary-key
// constraint violation from PostgreSQL, MySQL/MariaDB or SQLite.
func IsUniqueViolation(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code == pgUniqueViolation
	}
	if myErr, ok := errors.AsType[*mysql.MySQLError](err); ok {
		return myErr.Number == myDupEntry || myErr.Number == myDupEntryWithKeyName
	}
	if liteErr, ok := errors.AsType[*sqlite.Error](err); ok {
		switch liteErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return true
		case sqlite3.SQLITE_CONSTRAINT: // primary code only: fall back to the message
			return strings.Contains(liteErr.Error(), "UNIQUE constraint failed")
		}
	}
	return false
}

// IsForeignKeyViolation reports whether err (or an error it wraps) is a foreign-key violation
// from PostgreSQL, MySQL/MariaDB or SQLite, on either side: inserting a child without its parent
// or deleting a parent that still has children.
func IsForeignKeyViolation(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code == pgForeignKeyViolation
	}
	if myErr, ok := errors.AsType[*mysql.MySQLError](err); ok {
		switch myErr.Number {
		case myRowIsReferenced, myNoReferencedRow, myRowIsReferencedOld, myNoReferencedRowOld:
			return true
		}
		return false
	}
	if liteErr, ok := errors.AsType[*sqlite.Error](err); ok {
		switch liteErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return true
		}
		// SQLite reports a parent row deleted while a child references it, from a statement
		// that cascades through several tables, with the primary code or SQLITE_CONSTRAINT_TRIGGER
		// (1811): any constraint code with the foreign-key message is one.
		if liteErr.Code()&0xff == sqlite3.SQLITE_CONSTRAINT {
			return strings.Contains(liteErr.Error(), "FOREIGN KEY constraint failed")
		}
	}
	return false
}
