package event

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
)

// TestInboxStates: acquire → completed; a second delivery of a completed event is skipped; a live
// lease answers in progress; an expired lease is taken over; a failed handler releases the lease
// so the next delivery runs; cleanup removes completed rows past the retention.
func TestInboxStates(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		clock := newFakeClock()
		cfg := outboxConfig()
		cfg.Middleware.Inbox = true
		b := newBus(t, cfg, Deps{DB: d, Clock: clock.Now})
		var calls atomic.Int64
		fail := errors.New("handler failed")
		var failNext atomic.Bool
		h := b.inboxMiddleware(func(context.Context, *Envelope) error {
			calls.Add(1)
			if failNext.Swap(false) {
				return fail
			}
			return nil
		}, "g")
		env := &Envelope{ID: "evt-1", Type: "svc.test.happened"}

		// failure releases: the redelivery runs the handler again
		failNext.Store(true)
		if err := h(ctx, env); !errors.Is(err, fail) {
			t.Fatalf("first delivery = %v, want the handler error", err)
		}
		if err := h(ctx, env); err != nil {
			t.Fatalf("redelivery = %v", err)
		}
		var row InboxRow
		if err := d.NewSelect().Model(&row).Where("event_id = ?", "evt-1").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if row.Status != InboxCompleted || row.CompletedAt.IsZero() || row.LockID != "" || row.ConsumerGroup != "g" {
			t.Errorf("row = %+v, want completed without lock", row)
		}
		// deduplication: a redelivered completed event does not run the handler
		if err := h(ctx, env); err != nil || calls.Load() != 2 {
			t.Errorf("duplicate delivery = %v, calls %d, want nil and 2", err, calls.Load())
		}
		// another group handles it independently
		if err := b.inboxMiddleware(func(context.Context, *Envelope) error { return nil }, "g2")(ctx, env); err != nil {
			t.Errorf("group g2 = %v", err)
		}

		// in progress, then takeover after the lease
		now := clock.Now()
		res, lock, err := b.inbox.acquire(ctx, "g", "evt-2", now, now.Add(cfg.Inbox.ProcessingLease))
		if err != nil || res != acquired || lock == "" {
			t.Fatalf("acquire = %v, %q, %v", res, lock, err)
		}
		if err := h(ctx, &Envelope{ID: "evt-2"}); !errors.Is(err, ErrInboxInProgress) {
			t.Errorf("delivery under a live lease = %v, want ErrInboxInProgress", err)
		}
		clock.Advance(cfg.Inbox.ProcessingLease + time.Second)
		before := calls.Load()
		if err := h(ctx, &Envelope{ID: "evt-2"}); err != nil || calls.Load() != before+1 {
			t.Errorf("delivery after the lease expired = %v, calls +%d, want a takeover", err, calls.Load()-before)
		}
		// the crashed holder's late completion does not count
		if ok, err := b.inbox.complete(ctx, "g", "evt-2", lock, clock.Now()); ok || err != nil {
			t.Errorf("stale complete = %v, %v, want false", ok, err)
		}

		// cleanup
		clock.Advance(cfg.Inbox.Retention + time.Hour)
		n, err := b.inbox.cleanup(ctx, DBTime(clock.Now().Add(-cfg.Inbox.Retention)))
		if err != nil || n != 3 {
			t.Errorf("cleanup = %d, %v, want 3", n, err)
		}
	})
}

// TestInboxRetentionStartupError: with the inbox and the outbox on, a retention not above the
// retry horizon fails New with config.ErrInboxRetentionTooShort (spec §6.1, §7).
func TestInboxRetentionStartupError(t *testing.T) {
	t.Parallel()
	d := migratedDB(t, config.SQLite)
	cfg := outboxConfig()
	cfg.Middleware.Inbox = true
	cfg.Transports.Outbox.MaxRetries = 10
	cfg.Inbox.Retention = config.OutboxRetryHorizon(10) // 2046 s: equal is too short
	if _, err := New(cfg, withTransports(Deps{DB: d})); !errors.Is(err, config.ErrInboxRetentionTooShort) {
		t.Errorf("New = %v, want ErrInboxRetentionTooShort", err)
	}
	cfg.Inbox.Retention += time.Second
	if _, err := New(cfg, withTransports(Deps{DB: d})); err != nil {
		t.Errorf("New = %v, want nil above the horizon", err)
	}
}
