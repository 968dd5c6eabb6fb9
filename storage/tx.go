package storage

import (
	"context"
	"database/sql"
	"errors"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
)

// txAttempts bounds how often a transaction that lost a deadlock is run again.
const txAttempts = 4

// inTx runs fn in a transaction on the primary database. The module's transactions touch rows
// that requests and other nodes' workers work on at the same moment, so on PostgreSQL and
// MySQL/MariaDB they run at READ COMMITTED (REPEATABLE READ's next-key locks make concurrent
// lease and finish transactions deadlock on MariaDB), and a transaction the database picked as
// a deadlock victim is run again: every transaction of the module is conditional on the state it
// finds and does no I/O outside the database, so repeating it is safe.
//
// Each attempt runs with its own event.TxScope in ctx: events published inside an attempt that
// rolled back are discarded, and only the attempt that committed delivers (tx_memory) or wakes
// the outbox relay.
func (s *Service) inTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	var opts *sql.TxOptions
	if s.db.Kind == config.MySQL || s.db.Kind == config.Postgres {
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	var err error
	for range txAttempts {
		attemptCtx, scope := event.NewTxScope(ctx)
		err = s.db.RunInTx(attemptCtx, opts, fn)
		if err != nil {
			scope.Discard()
		} else {
			scope.Commit(context.WithoutCancel(ctx))
		}
		if !isRetryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// isRetryable reports a deadlock or serialization failure.
func isRetryable(err error) bool {
	if err == nil {
		return false
	}
	if my, ok := errors.AsType[*mysql.MySQLError](err); ok {
		return my.Number == 1213 || my.Number == 1205 // deadlock, lock wait timeout
	}
	if pg, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pg.Code == "40P01" || pg.Code == "40001"
	}
	return false
}
