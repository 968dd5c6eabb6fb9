package outbox

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
)

// TestTwoRelays: two buses (two nodes) on one database relay one outbox; with events published
// from both nodes, each event reaches its group exactly once across the two nodes.
func TestTwoRelays(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		const perNode = 100
		cfg := outboxConfig()
		cfg.Transports.Outbox.RelayInterval = 20 * time.Millisecond
		cfg.Transports.Outbox.BatchSize = 10
		var mu sync.Mutex
		seen := map[string]int{}
		handle := func(_ context.Context, env *event.Envelope) error {
			mu.Lock()
			seen[env.ID]++
			mu.Unlock()
			return nil
		}
		var nodes []*event.Bus
		var stops []func() error
		for range 2 {
			b := newBus(t, cfg, event.Deps{DB: d})
			if _, err := b.Subscribe("svc.test.happened", handle, event.WithGroup("g")); err != nil {
				t.Fatal(err)
			}
			stops = append(stops, start(t, b))
			nodes = append(nodes, b)
		}
		var wg sync.WaitGroup
		for _, b := range nodes {
			wg.Go(func() {
				for i := range perNode {
					err := b.RunInTx(context.Background(), d, func(ctx context.Context, tx bun.Tx) error {
						return b.Publish(ctx, testEvent{N: i}, event.InTx(tx))
					})
					if err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		eventually(t, 30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == 2*perNode }, "every event delivered")
		for _, stop := range stops {
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("event %s delivered %d times, want 1", id, n)
			}
		}
		var pending int
		if err := d.NewSelect().Model((*event.OutboxRow)(nil)).ColumnExpr("count(*)").Where("status <> ?", event.OutboxCompleted).Scan(context.Background(), &pending); err != nil {
			t.Fatal(err)
		}
		if pending != 0 {
			t.Errorf("%d rows not completed", pending)
		}
	})
}

// TestNotifyWakesOtherNode: on PostgreSQL a commit on one node wakes the relay of another node
// through LISTEN/NOTIFY, although its relay_interval is an hour.
func TestNotifyWakesOtherNode(t *testing.T) {
	t.Parallel()
	d := migratedDB(t, config.Postgres)
	cfg := outboxConfig()
	cfg.Transports.Outbox.RelayInterval = time.Hour
	receiver, rec := recordedBus(t, cfg, event.Deps{DB: d})
	ctx := context.Background()
	eventually(t, 10*time.Second, func() bool {
		var n int
		_ = d.NewRaw("SELECT count(*) FROM pg_stat_activity WHERE query = ?", `LISTEN "`+outboxOf(receiver).channel+`"`).Scan(ctx, &n)
		return n > 0
	}, "the receiver listens")
	sender := newBus(t, cfg, event.Deps{DB: d}) // its workers do not run: only the receiver's relay can deliver
	startBus(t, sender)
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	go outboxOf(sender).announce(actx)
	publishTx(t, sender, d, testEvent{N: 1})
	eventually(t, 10*time.Second, func() bool { return rec.Count() == 1 }, "the receiver relayed the sender's commit")
}
