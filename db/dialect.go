package db

import (
	"errors"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
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
