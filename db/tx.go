package db

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// TxAttempts bounds how often InTxRetrying runs a transaction the database rolled back as a
// deadlock victim or serialization failure.
const TxAttempts = 4

// SQLSTATE codes and MySQL/MariaDB error numbers of a transaction the database rolled back so
// that another could go on.
const (
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
	myLockDeadlock         = 1213 // ER_LOCK_DEADLOCK
	myLockWaitTimeout      = 1205 // ER_LOCK_WAIT_TIMEOUT
)

// InTx runs fn in one transaction under the house's transaction policy (see the package
// documentation, "Transactions"): committed when fn returns nil, rolled back when it returns an
// error or panics.
//
//   - PostgreSQL and MySQL/MariaDB: READ COMMITTED. Every statement sees the rows committed
//     before it started, so the reads after a locking read (ForUpdate) see what the previous
//     holder of the lock committed, and MySQL takes no gap locks between concurrent claimers.
//   - SQLite: one writer per database file in the process. The transaction waits for the
//     process's writer lock (or for ctx to end) before it takes a pooled connection, then
//     begins with BEGIN IMMEDIATE, which takes the database's write lock at once (other
//     processes wait in busy_timeout). A call made with the context of a transaction that holds
//     the writer lock does not wait for it again (it would wait for itself), and meets the
//     database lock instead, as before the lock existed.
//
// It makes a single attempt and never retries, because fn may have effects outside the
// database; InTxRetrying repeats a transaction that is safe to repeat.
func (d *DB) InTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	if d.writer != nil {
		if held, _ := ctx.Value(writerKey{}).(chan struct{}); held != d.writer {
			select {
			case d.writer <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			defer func() { <-d.writer }()
			ctx = context.WithValue(ctx, writerKey{}, d.writer)
		}
	}
	return d.RunInTx(ctx, d.txOptions(), fn)
}

// InSavepoint runs fn inside a savepoint of the open transaction tx (bun's nested transaction:
// SAVEPOINT, then RELEASE or ROLLBACK TO on every dialect): an error of fn undoes what fn wrote
// and leaves the rest of tx intact, so the caller can record the failure and commit. A deadlock
// or serialization failure still loses the whole transaction on PostgreSQL and MySQL; the caller
// checks IsRetryable.
func InSavepoint(ctx context.Context, tx bun.IDB, fn func(ctx context.Context, sp bun.Tx) error) error {
	return tx.RunInTx(ctx, nil, fn)
}

// InTxRetrying is InTx, run again (at most TxAttempts times in all) while the database rolls the
// transaction back as a deadlock victim, a serialization failure or a lock wait timeout
// (IsRetryable) and ctx has not ended. Use it only when fn does nothing outside the database
// that a second run would repeat. Each attempt gets a context derived from ctx, with nothing
// carried over from the attempt before.
func (d *DB) InTxRetrying(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return Retrying(ctx, func() error { return d.InTx(ctx, fn) })
}

// Retrying calls attempt (at most TxAttempts times in all) while it fails with an error for which
// IsRetryable holds and ctx has not ended, and returns the last error. attempt runs one whole
// transaction (InTx) and whatever must be set up and settled around it per attempt.
func Retrying(ctx context.Context, attempt func() error) error {
	var err error
	for range TxAttempts {
		err = attempt()
		if !IsRetryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// IsRetryable reports whether err (or an error it wraps) is the database rolling a transaction
// back so that another can go on: a deadlock or serialization failure on PostgreSQL, a deadlock
// or lock wait timeout on MySQL/MariaDB. Running the same transaction again may then succeed.
func IsRetryable(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code == pgDeadlockDetected || pgErr.Code == pgSerializationFailure
	}
	if myErr, ok := errors.AsType[*mysql.MySQLError](err); ok {
		return myErr.Number == myLockDeadlock || myErr.Number == myLockWaitTimeout
	}
	return false
}

// IsBusy reports whether err (or an error it wraps) is SQLite's "database is busy" or "database
// table is locked": another process held the write lock for longer than busy_timeout.
func IsBusy(err error) bool {
	if e, ok := errors.AsType[*sqlite.Error](err); ok {
		c := e.Code() & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	}
	return false
}

// txOptions is the isolation of InTx's transactions: READ COMMITTED on the server dialects;
// SQLite has a single level (serializable).
func (d *DB) txOptions() *sql.TxOptions {
	if d.Kind == config.SQLite {
		return nil
	}
	return &sql.TxOptions{Isolation: sql.LevelReadCommitted}
}

// writerKey marks a context whose transaction holds the SQLite writer lock (the value is the lock).
type writerKey struct{}

// writers holds one writer lock per SQLite database file opened by the process, keyed by its
// absolute path, so two DBs opened on one file share it.
var writers sync.Map

// writerLock returns the process's writer lock of the SQLite database at path.
func writerLock(path string) chan struct{} {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	l, _ := writers.LoadOrStore(path, make(chan struct{}, 1))
	return l.(chan struct{})
}
