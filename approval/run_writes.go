package approval

import (
	"context"
	"database/sql"

	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
)

// deferrable is a bun insert or update query: rendered at the next flush when deferred,
// executed at once otherwise.
type deferrable interface {
	event.Write
	Exec(ctx context.Context, dest ...any) (sql.Result, error)
}

// later leaves q to the next flush of the command's batching scope (inTx): the writes a run
// defers go to the database together — on PostgreSQL in one round trip, with the outbox rows of
// the events published so far — just before the next statement the run builds on its
// transaction (runTx), or after the command's function, before the commit. The query renders
// its model when flushed, so it writes the model's values of that moment; the run mutates a
// model only to write it. Build q on r.raw: runTx's builders flush first. Without a batching
// scope q runs at once.
func (r *run) later(ctx context.Context, q deferrable) error { return r.laterAs(ctx, nil, q) }

// laterAs is later for a write of the row key names: while a write with the same key waits for
// the flush, q is that write — it renders the model's values of the flush — and is not added.
func (r *run) laterAs(ctx context.Context, key any, q deferrable) error {
	if scope := event.ScopeFrom(ctx); scope != nil && scope.Defer(key, q) != nil {
		return nil
	}
	_, err := q.Exec(ctx)
	return err
}

// instanceRow keys the writes of a run's instance row: start's insert, waiting for the flush,
// already writes what save would update.
type instanceRow struct{ id string }

// runTx is a run's transaction. Every statement built on it first flushes the writes the run
// deferred, so no statement of the command reads or changes rows past a pending write; a
// failed flush fails the statement. Tx itself (no flush) is for tables a run never writes.
// Code called from a run (lifecycle hooks, the business projection, form tables) gets runTx, so
// its statements see the command's writes too.
//
// A runTx is made per statement from the command's ctx (run.tx) and never kept: bun's builders
// (NewSelect, NewInsert, ...) take no context, so the flush they do first finds the scope, and
// the context to write with, in the value itself.
type runTx struct {
	bun.Tx
	ctx context.Context // the statement's command context, carrying its scope
}

var _ bun.IDB = runTx{} // hooks and projection code receive it as bun.IDB

// flush writes the deferred writes of the run's scope (none without a batching scope).
func (t runTx) flush() error {
	if scope := event.ScopeFrom(t.ctx); scope != nil {
		return scope.Flush(t.ctx, t.Tx)
	}
	return nil
}

// NewSelect flushes, then starts a select.
func (t runTx) NewSelect() *bun.SelectQuery { return t.Tx.NewSelect().Err(t.flush()) }

// NewInsert flushes, then starts an insert (deferred or executed at once).
func (t runTx) NewInsert() *bun.InsertQuery { return t.Tx.NewInsert().Err(t.flush()) }

// NewUpdate flushes, then starts an update.
func (t runTx) NewUpdate() *bun.UpdateQuery { return t.Tx.NewUpdate().Err(t.flush()) }

// NewDelete flushes, then starts a delete.
func (t runTx) NewDelete() *bun.DeleteQuery { return t.Tx.NewDelete().Err(t.flush()) }

// NewRaw flushes, then starts a raw query.
func (t runTx) NewRaw(query string, args ...any) *bun.RawQuery {
	return t.Tx.NewRaw(query, args...).Err(t.flush())
}

// ExecContext flushes, then executes query.
func (t runTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := t.flush(); err != nil {
		return nil, err
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

// QueryRowContext flushes, then runs query; a failed flush surfaces at Scan (the query runs on
// a context canceled with the flush's error).
func (t runTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if err := t.flush(); err != nil {
		failed, cancel := context.WithCancelCause(ctx)
		cancel(err)
		return t.Tx.QueryRowContext(failed, query, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// NewMerge flushes, then starts a merge.
func (t runTx) NewMerge() *bun.MergeQuery { return t.Tx.NewMerge().Err(t.flush()) }

// QueryContext flushes, then runs query.
func (t runTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := t.flush(); err != nil {
		return nil, err
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

// BeginTx flushes, then starts a savepoint.
func (t runTx) BeginTx(ctx context.Context, opts *sql.TxOptions) (bun.Tx, error) {
	if err := t.flush(); err != nil {
		return bun.Tx{}, err
	}
	return t.Tx.BeginTx(ctx, opts)
}

// RunInTx flushes, then runs fn in a savepoint.
func (t runTx) RunInTx(ctx context.Context, opts *sql.TxOptions, fn func(ctx context.Context, tx bun.Tx) error) error {
	if err := t.flush(); err != nil {
		return err
	}
	return t.Tx.RunInTx(ctx, opts, fn)
}
