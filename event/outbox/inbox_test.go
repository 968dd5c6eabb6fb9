package outbox

import (
	"context"
	"testing"
	"time"

	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
)

// TestOutboxInboxRedelivery: an event relayed twice (the relay crashed after forwarding, before
// completing) is handled once by a group with the inbox.
func TestOutboxInboxRedelivery(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		clock := newFakeClock()
		cfg := outboxConfig()
		cfg.Middleware.Inbox = true
		b := outboxBus(t, d, cfg, clock)
		rec := newRecorder()
		if _, err := b.Subscribe("svc.test.happened", rec.Handle, event.WithGroup("g")); err != nil {
			t.Fatal(err)
		}
		startBus(t, b)
		id := publishTx(t, b, d, testEvent{N: 1})
		rows, err := outboxOf(b).claim(ctx)
		if err != nil || len(rows) != 1 {
			t.Fatalf("claim = %d, %v", len(rows), err)
		}
		// forwarded, then "crashed" before marking it completed
		if err := outboxOf(b).sink.Publish(ctx, envelope(&rows[0])); err != nil {
			t.Fatal(err)
		}
		// the handler has run and the inbox has recorded it: the recorder counts before the
		// middleware completes the inbox row, and a redelivery in between is (rightly) refused as
		// in progress
		eventually(t, 5*time.Second, func() bool {
			n, err := d.NewSelect().Model((*event.InboxRow)(nil)).
				Where("event_id = ? AND consumer_group = ? AND status = ?", id, "g", event.InboxCompleted).Count(ctx)
			return err == nil && n == 1 && rec.Count() == 1
		}, "first delivery recorded in the inbox")
		clock.Advance(outboxOf(b).lease() + time.Second)
		if n, err := outboxOf(b).RelayOnce(ctx); n != 1 || err != nil {
			t.Fatalf("RelayOnce = %d, %v", n, err)
		}
		if r := rowOf(t, d, id); r.Status != event.OutboxCompleted {
			t.Fatalf("status = %s, want completed", r.Status)
		}
		// a marker behind the redelivery in the same ordered queue: once it is handled, the
		// redelivery has been through the inbox
		if err := outboxOf(b).sink.Publish(ctx, &event.Envelope{ID: "marker", Type: "svc.test.happened", Payload: testEvent{}}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, func() bool { return rec.Count() == 2 }, "marker handled")
		if rec.Duplicates() != 0 || rec.IDs[id] != 1 {
			t.Errorf("event handled %d times, want 1", rec.IDs[id])
		}
	})
}
