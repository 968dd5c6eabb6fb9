package memory

import (
	"context"
	"errors"
	"github.com/svc-framework/svc/event"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
)

// TestTxMemory: events published in a transaction reach subscribers only after the commit, in
// commit order; a rollback delivers nothing.
func TestTxMemory(t *testing.T) {
	t.Parallel()
	d := migratedDB(t, config.SQLite)
	cfg := defaultConfig()
	cfg.Transports.TxMemory.Enabled = true
	cfg.Routing = []config.EventRoute{{Pattern: "svc.*", Transports: []string{"tx_memory"}}}
	b := newBus(t, cfg, event.Deps{DB: d})
	rec := newRecorder()
	if _, err := b.Subscribe("svc.test.happened", rec.Handle); err != nil {
		t.Fatal(err)
	}
	start(t, b)
	ctx := context.Background()
	err := b.RunInTx(ctx, d, func(ctx context.Context, tx bun.Tx) error {
		if err := b.Publish(ctx, testEvent{N: 1}, event.InTx(tx)); err != nil {
			return err
		}
		if rec.Count() != 0 {
			t.Errorf("delivered before commit")
		}
		return b.PublishBatch(ctx, []event.Event{testEvent{N: 2}, testEvent{N: 3}}, event.InTx(tx))
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool { return rec.Count() == 3 }, "three deliveries after commit")

	rollback := errors.New("rollback")
	err = b.RunInTx(ctx, d, func(ctx context.Context, tx bun.Tx) error {
		if err := b.Publish(ctx, testEvent{N: 4}, event.InTx(tx)); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatalf("RunInTx = %v", err)
	}
	// a later committed event proves the queue was drained past the rolled-back one
	_ = b.RunInTx(ctx, d, func(ctx context.Context, tx bun.Tx) error { return b.Publish(ctx, testEvent{N: 5}, event.InTx(tx)) })
	eventually(t, 5*time.Second, func() bool { return rec.Count() == 4 }, "the committed event")
	for _, env := range rec.Envs {
		if env.Payload.(testEvent).N == 4 {
			t.Errorf("rolled-back event delivered")
		}
	}

	// a manual scope: Discard drops, Commit delivers
	sctx, scope := event.NewTxScope(ctx)
	_ = b.Publish(sctx, testEvent{N: 6}, event.InTx(fakeIDB{}))
	scope.Discard()
	sctx, scope = event.NewTxScope(ctx)
	_ = b.Publish(sctx, testEvent{N: 7}, event.InTx(fakeIDB{}))
	scope.Commit(ctx)
	eventually(t, 5*time.Second, func() bool { return rec.Count() == 5 }, "the manually committed event")
	if n := rec.Envs[4].Payload.(testEvent).N; n != 7 {
		t.Errorf("last delivery N = %d, want 7", n)
	}
}

// fakeIDB stands for a transaction in tests that never reach the database.
type fakeIDB struct{ bun.IDB }
