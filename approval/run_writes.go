package approval

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// queueable is a bun insert, update or raw query a run writes through its batch: rendered to
// SQL when queued, executed at once when nothing batches.
type queueable interface {
	AppendQuery(gen schema.QueryGen, b []byte) ([]byte, error)
	Exec(ctx context.Context, dest ...any) (sql.Result, error)
}

// writeBatch is a run's queue of writes (run.writes). Queue renders a write to SQL at once —
// the model's values of that moment; changing the model afterwards changes nothing queued — and
// leaves the text in the command's batching scope (inTx's event.TxScope), with the outbox rows
// of the events published so far. Flush writes them, on PostgreSQL in one round trip (the
// statements joined); the run calls it by name before every read of rows it may have written,
// and inTx flushes what is left before the commit. Without a batching scope, or with
// Service.writesAtOnce (the unbatched baseline of BenchmarkDecide), a write executes when
// queued.
//
// Batching is kept because it pays on PostgreSQL: BenchmarkDecide (an approval on a
// three-approval-node flow) measured the figures docs/approval.md records under Writes.
type writeBatch struct {
	tx     bun.Tx
	atOnce bool
}

// queuedWrite is one rendered write waiting in the scope. q is kept only for a keyed write,
// which a later write under the same key renders again (QueueAs).
type queuedWrite struct {
	sql []byte
	q   queueable
}

var _ event.Write = (*queuedWrite)(nil)

// AppendQuery appends the text rendered when the write was queued.
func (w *queuedWrite) AppendQuery(_ schema.QueryGen, b []byte) ([]byte, error) {
	return append(b, w.sql...), nil
}

// Queue renders q now and leaves it to the next Flush (or executes it when nothing batches).
func (w writeBatch) Queue(ctx context.Context, q queueable) error { return w.QueueAs(ctx, nil, q) }

// QueueAs is Queue for a write of the row key names. While a write under the same key waits
// for the flush, q is not added: the waiting write is rendered again now, in its place, so it
// carries the row's values of this moment (start's instance insert then writes what save would
// update, in one statement).
func (w writeBatch) QueueAs(ctx context.Context, key any, q queueable) error {
	scope := event.ScopeFrom(ctx)
	if scope == nil || w.atOnce || !scope.Batching() {
		_, err := q.Exec(ctx)
		return err
	}
	rendered, err := w.render(q)
	if err != nil {
		return err
	}
	if len(rendered) == 0 {
		return nil // a query that writes nothing (bun renders an empty slice as nothing)
	}
	item := &queuedWrite{sql: rendered}
	if key != nil {
		item.q = q
	}
	have, ok := scope.Defer(key, item).(*queuedWrite)
	switch {
	case !ok: // the scope has ended: nothing left to batch into
		_, err := q.Exec(ctx)
		return err
	case have != item:
		have.sql, err = w.render(have.q)
		return err
	}
	return nil
}

// render is q's SQL on the run's transaction.
func (w writeBatch) render(q queueable) ([]byte, error) {
	b, err := q.AppendQuery(w.tx.NewRaw("").DB().QueryGen(), nil)
	if err != nil {
		return nil, fmt.Errorf("approval: render queued write: %w", err)
	}
	return b, nil
}

// Flush writes what is queued (and the scope's outbox rows): call it before a statement that
// reads rows the run may have queued writes of, and before handing the transaction to code
// outside the run (lifecycle hooks, a savepoint).
func (w writeBatch) Flush(ctx context.Context) error {
	if scope := event.ScopeFrom(ctx); scope != nil {
		return scope.Flush(ctx, w.tx)
	}
	return nil
}

// instanceRow keys the writes of a run's instance row: start's insert, waiting for the flush,
// is rendered again by save instead of an update being added.
type instanceRow struct{ id string }
