package storage

import (
	"context"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
)

// inTx runs fn in a transaction on the primary database, under db's transaction policy
// (db.DB.InTx: READ COMMITTED on PostgreSQL and MySQL/MariaDB, whose REPEATABLE READ next-key
// locks make concurrent lease and finish transactions deadlock on MariaDB). The module's
// transactions touch rows that requests and other nodes' workers work on at the same moment, so
// a transaction the database picked as a deadlock victim is run again (db.Retrying): every
// transaction of the module is conditional on the state it finds and does no I/O outside the
// database, so repeating it is safe.
//
// Each attempt runs with its own event.TxScope in ctx: events published inside an attempt that
// rolled back are discarded, and only the attempt that committed delivers (tx_memory) or wakes
// the outbox relay.
func (s *Service) inTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return db.Retrying(ctx, func() error {
		attemptCtx, scope := event.NewTxScope(ctx)
		err := s.db.InTx(attemptCtx, fn)
		if err != nil {
			scope.Discard()
		} else {
			scope.Commit(context.WithoutCancel(ctx))
		}
		return err
	})
}
