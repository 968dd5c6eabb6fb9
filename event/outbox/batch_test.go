package outbox

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
)

// outboxInserts counts the statements that insert into sys_event_outbox (a statement of a
// joined PostgreSQL flush counts once per INSERT in its text).
type outboxInserts struct{ n atomic.Int64 }

func (c *outboxInserts) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (c *outboxInserts) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	c.n.Add(int64(strings.Count(e.Query, `INTO "sys_event_outbox"`) + strings.Count(e.Query, "INTO `sys_event_outbox`")))
}

// relayedNs relays once and returns the N of the forwarded test events in forwarding order.
func relayedNs(t *testing.T, b *event.Bus, sink *switchSink) []int {
	t.Helper()
	if _, err := outboxOf(b).RelayOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ns []int
	for _, env := range sink.got {
		var e testEvent
		if err := json.Unmarshal(env.Payload.(event.RawPayload).Body, &e); err != nil {
			t.Fatal(err)
		}
		ns = append(ns, e.N)
	}
	return ns
}

// TestOutboxBatch: in a batching scope (Bus.RunInTx) the rows of a transaction's publishes are
// written by one INSERT at the flush before the commit — none before it — and relayed in the
// order of the publishes; a scope that does not batch writes each row at once.
func TestOutboxBatch(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		hook := &outboxInserts{}
		d.UseQueryHook(hook) // before the bus and its relay use d
		b, sink := sinkBus(t, d, outboxConfig(), newFakeClock())

		err := b.RunInTx(ctx, d, func(ctx context.Context, tx bun.Tx) error {
			for n := 1; n <= 3; n++ {
				if err := b.Publish(ctx, testEvent{N: n}, event.InTx(tx)); err != nil {
					return err
				}
			}
			if n, err := tx.NewSelect().Model((*event.OutboxRow)(nil)).Count(ctx); err != nil || n != 0 {
				t.Errorf("rows before the flush = %d, %v, want 0", n, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := hook.n.Load(); got != 1 {
			t.Errorf("outbox INSERTs = %d, want 1 for three publishes", got)
		}
		if diff := cmp.Diff([]int{1, 2, 3}, relayedNs(t, b, sink)); diff != "" {
			t.Errorf("relayed order (-want +got):\n%s", diff)
		}

		// Without Batch the row is written by the publish.
		sink.got = nil
		sctx, scope := event.NewTxScope(ctx)
		err = d.RunInTx(sctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := b.Publish(ctx, testEvent{N: 4}, event.InTx(tx)); err != nil {
				return err
			}
			n, err := tx.NewSelect().Model((*event.OutboxRow)(nil)).Where("status = ?", event.OutboxPending).Count(ctx)
			if err != nil || n != 1 {
				t.Errorf("pending rows right after the publish = %d, %v, want 1", n, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		scope.Commit(ctx)
		if diff := cmp.Diff([]int{4}, relayedNs(t, b, sink)); diff != "" {
			t.Errorf("relayed (-want +got):\n%s", diff)
		}
	})
}

// TestTxScopeDefer: deferred writes run at Flush in the order deferred (values with "?", "$1"
// and ";" intact), a key keeps its first write, a failing write fails the transaction (nothing
// committed), and a scope that does not batch defers nothing.
func TestTxScopeDefer(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		row := func(id string) *event.OutboxRow {
			return &event.OutboxRow{ID: id, EventID: id, EventType: "svc.test.happened", Source: "test", Payload: `{"q":"? $1 ;"}`,
				Status: event.OutboxCompleted, CreatedAt: event.DBTime(newFakeClock().Now()), OccurredAt: event.DBTime(newFakeClock().Now())}
		}
		sctx, scope := event.NewTxScope(ctx)
		if scope.Defer(nil, d.NewInsert().Model(row("x"))) != nil {
			t.Fatal("Defer on a scope that does not batch kept the write")
		}
		scope.Batch()
		err := d.RunInTx(sctx, nil, func(ctx context.Context, tx bun.Tx) error {
			a := tx.NewInsert().Model(row("a"))
			if got := scope.Defer("k", a); got != event.Write(a) {
				t.Errorf("first Defer under a key returned %v", got)
			}
			if got := scope.Defer("k", tx.NewInsert().Model(row("ignored"))); got != event.Write(a) {
				t.Errorf("second Defer under the key returned %v, want the first write", got)
			}
			scope.Defer(nil, tx.NewUpdate().Model((*event.OutboxRow)(nil)).Set("status = ?", event.OutboxDead).Where("id = ?", "a"))
			return scope.Flush(ctx, tx)
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []event.OutboxRow
		if err := d.NewSelect().Model(&got).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != "a" || got[0].Status != event.OutboxDead || !strings.Contains(got[0].Payload, `"? $1 ;"`) {
			t.Fatalf("rows = %+v, want only a, updated to dead after its insert, its payload intact", got)
		}

		sctx, scope = event.NewTxScope(ctx)
		scope.Batch()
		err = d.RunInTx(sctx, nil, func(ctx context.Context, tx bun.Tx) error {
			scope.Defer(nil, tx.NewInsert().Model(row("b")))
			scope.Defer(nil, tx.NewInsert().Model(row("a"))) // duplicate key
			return scope.Flush(ctx, tx)
		})
		if err == nil {
			t.Fatal("a failing deferred write did not fail the transaction")
		}
		if n := countRows(t, d, (*event.OutboxRow)(nil)); n != 1 {
			t.Errorf("rows after the failed flush = %d, want 1 (b rolled back)", n)
		}
	})
}
