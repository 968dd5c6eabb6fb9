package approval

import (
	"context"
	"testing"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/internal/testservice"
	"github.com/uptrace/bun"
)

// queuedRow is the table of TestQueuedWriteKeepsItsValues.
type queuedRow struct {
	bun.BaseModel `bun:"table:apv_test_queued_write"`
	ID            string `bun:"id,pk"`
	Note          string `bun:"note"`
}

// TestQueuedWriteKeepsItsValues: a write is rendered when queued, so changing its model
// afterwards — before the flush, or by a keyed write of another row — changes nothing written;
// a later write under the same key renders the waiting one again with the values of that
// moment (start's insert, then save); nothing reaches the database before Flush.
func TestQueuedWriteKeepsItsValues(t *testing.T) {
	t.Parallel()
	testservice.EachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		if _, err := d.NewCreateTable().Model((*queuedRow)(nil)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		read := func(tx bun.IDB) map[string]string {
			var rows []queuedRow
			if err := tx.NewSelect().Model(&rows).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range rows {
				got[r.ID] = r.Note
			}
			return got
		}
		err := event.RunInTx(ctx, d, func(ctx context.Context, tx bun.Tx) error {
			w := writeBatch{tx: tx}
			a := &queuedRow{ID: "a", Note: "queued"}
			if err := w.Queue(ctx, tx.NewInsert().Model(a)); err != nil {
				return err
			}
			a.Note = "changed after queuing"
			b := &queuedRow{ID: "b", Note: "first"}
			if err := w.QueueAs(ctx, "b", tx.NewInsert().Model(b)); err != nil {
				return err
			}
			b.Note = "second"
			if err := w.QueueAs(ctx, "b", tx.NewUpdate().Model(b).WherePK()); err != nil {
				return err
			}
			b.Note = "changed after the keyed write"
			if got := read(tx); len(got) != 0 {
				t.Errorf("before Flush the table holds %v, want nothing", got)
			}
			if err := w.Flush(ctx); err != nil {
				return err
			}
			if got := read(tx); got["a"] != "queued" || got["b"] != "second" || len(got) != 2 {
				t.Errorf("after Flush the table holds %v, want a=queued b=second", got)
			}
			a.Note = "changed before the commit"
			return w.Queue(ctx, tx.NewUpdate().Model(a).WherePK())
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := read(d); got["a"] != "changed before the commit" || got["b"] != "second" {
			t.Errorf("committed rows %v, want a's last queued note and b=second", got)
		}
	})
}
