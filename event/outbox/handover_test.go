package outbox

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
)

// gatedHandler counts deliveries per event id; the delivery of testEvent{N: gate} blocks until
// release is closed, after signalling entered, so a test holds the relay loop mid-forward.
type gatedHandler struct {
	gate    int
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	seen    map[string]int
}

func newGatedHandler(gate int) *gatedHandler {
	return &gatedHandler{gate: gate, entered: make(chan struct{}), release: make(chan struct{}), seen: map[string]int{}}
}

func (g *gatedHandler) handle(_ context.Context, env *event.Envelope, evt testEvent) error {
	if evt.N == g.gate {
		close(g.entered)
		<-g.release
	}
	g.mu.Lock()
	g.seen[env.ID]++
	g.mu.Unlock()
	return nil
}

func (g *gatedHandler) count(id string) int { g.mu.Lock(); defer g.mu.Unlock(); return g.seen[id] }

func (g *gatedHandler) total() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, c := range g.seen {
		n += c
	}
	return n
}

// handOverNode is a started bus with the gated handler subscribed on the memory sink, whose
// relay worker's body (interval an hour: only commits wake it) the test runs itself, so it
// decides when the relay is told to stop. The relay is stopped when the test ends.
func handOverNode(t *testing.T, d *db.DB, cfg config.Event, clock func() time.Time, h *gatedHandler) (*event.Bus, *relayRun) {
	t.Helper()
	cfg.Transports.Outbox.RelayInterval = time.Hour
	b := newBus(t, cfg, event.Deps{DB: d, Clock: clock, AppName: "test"})
	if _, err := event.SubscribeTyped(b, h.handle, event.WithGroup("g")); err != nil {
		t.Fatal(err)
	}
	startBus(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	r := &relayRun{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- outboxOf(b).relayLoop(ctx) }()
	t.Cleanup(func() { _ = r.stop() })
	eventually(t, 10*time.Second, outboxOf(b).local.Load, "the relay opened the hand-over")
	return b, r
}

// relayRun is the relay worker's body running in a test.
type relayRun struct {
	cancel context.CancelFunc // tells the relay to stop
	done   chan error
	once   sync.Once
	err    error
}

// stop cancels the relay and waits for its body to return.
func (r *relayRun) stop() error {
	r.once.Do(func() { r.cancel(); r.err = <-r.done })
	return r.err
}

// leasedNow reports whether r was written claimed, with a lease running out about lease after now.
func leasedNow(r event.OutboxRow, now time.Time, lease time.Duration) bool {
	d := r.RetryAfter.Sub(now.Add(lease))
	return r.Status == event.OutboxProcessing && d > -2*time.Second && d < 2*time.Second
}

// TestHandOver: a row committed on a node whose relay runs is written already leased to that
// relay and forwarded by it without a claim; another relay cannot take it while the lease lives;
// a node that dies between the commit and the forward (its hand-over lost) leaves the row to
// any relay once the lease expires — the event is still delivered, once.
func TestHandOver(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		clock := newFakeClock()
		h := newGatedHandler(1)
		a, relay := handOverNode(t, d, outboxConfig(), clock.Now, h)
		lease := outboxOf(a).lease()

		id1 := publishTx(t, a, d, testEvent{N: 1})
		select {
		case <-h.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the relay did not forward the handed-over row")
		}
		if r := rowOf(t, d, id1); !leasedNow(r, clock.Now(), lease) {
			t.Fatalf("row 1 = %s until %v, want processing until about now + %v", r.Status, r.RetryAfter, lease)
		}
		// the relay is busy with event 1: event 2 waits in the hand-over
		id2 := publishTx(t, a, d, testEvent{N: 2})
		if r := rowOf(t, d, id2); !leasedNow(r, clock.Now(), lease) {
			t.Fatalf("row 2 = %s until %v, want processing until about now + %v", r.Status, r.RetryAfter, lease)
		}

		b, sink := sinkBus(t, d, outboxConfig(), clock) // a second node, relayed by hand
		if n, err := outboxOf(b).RelayOnce(ctx); n != 0 || err != nil {
			t.Fatalf("the other relay claimed %d handed-over rows under a live lease (%v)", n, err)
		}

		// node a "dies" with event 2 still in its hand-over
		if lost := outboxOf(a).takeHanded(); len(lost) != 1 || lost[0].EventID != id2 {
			t.Fatalf("hand-over held %d rows, want event 2", len(lost))
		}
		close(h.release)
		eventually(t, 10*time.Second, func() bool { return rowOf(t, d, id1).Status == event.OutboxCompleted }, "event 1 completed by its relay")
		if err := errors.Join(relay.stop(), a.Stop(ctx)); err != nil { // and is gone before its lease runs out
			t.Fatal(err)
		}
		if r := rowOf(t, d, id2); r.Status != event.OutboxProcessing {
			t.Fatalf("row 2 = %s, want processing (leased, lost with its node)", r.Status)
		}

		clock.Advance(lease + time.Second)
		if n, err := outboxOf(b).RelayOnce(ctx); n != 1 || err != nil {
			t.Fatalf("takeover claimed %d, %v, want the lost row", n, err)
		}
		if r := rowOf(t, d, id2); r.Status != event.OutboxCompleted {
			t.Errorf("row 2 = %s after the takeover, want completed", r.Status)
		}
		if sink.count() != 1 || sink.got[0].ID != id2 {
			t.Errorf("the other node forwarded %d events, want event 2 only", sink.count())
		}
		if h.count(id1) != 1 {
			t.Errorf("event 1 handled %d times, want 1", h.count(id1))
		}
	})
}

// TestHandOverBehind: while maxHanded batches wait for a busy relay, further commits write
// pending rows for the claim path; every event is still delivered once.
func TestHandOverBehind(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		clock := newFakeClock()
		cfg := outboxConfig()
		cfg.Transports.Outbox.BatchSize = 1
		h := newGatedHandler(0)
		a, _ := handOverNode(t, d, cfg, clock.Now, h)

		publishTx(t, a, d, testEvent{N: 0})
		<-h.entered
		var ids []string
		for i := 1; i <= maxHanded; i++ {
			ids = append(ids, publishTx(t, a, d, testEvent{N: i}))
		}
		over := publishTx(t, a, d, testEvent{N: maxHanded + 1})
		for _, id := range ids {
			if r := rowOf(t, d, id); r.Status != event.OutboxProcessing {
				t.Fatalf("a row within the hand-over's bound is %s, want processing", r.Status)
			}
		}
		if r := rowOf(t, d, over); r.Status != event.OutboxPending {
			t.Fatalf("the row past the bound is %s, want pending", r.Status)
		}
		close(h.release)
		want := maxHanded + 2
		eventually(t, 10*time.Second, func() bool { return h.total() == want }, "every event delivered")
		if n := countRows(t, d, (*event.OutboxRow)(nil)); n != want {
			t.Fatalf("%d rows, want %d", n, want)
		}
		eventually(t, 10*time.Second, func() bool {
			n, err := d.NewSelect().Model((*event.OutboxRow)(nil)).Where("status <> ?", event.OutboxCompleted).Count(context.Background())
			return err == nil && n == 0
		}, "every row completed")
		h.mu.Lock()
		defer h.mu.Unlock()
		for id, n := range h.seen {
			if n != 1 {
				t.Errorf("event %s handled %d times", id, n)
			}
		}
	})
}

// TestHandOverReleasedOnStop: rows still waiting in the hand-over when the relay stops are given
// back (pending, no lease), so another node relays them at once instead of after the lease.
func TestHandOverReleasedOnStop(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		clock := newFakeClock()
		h := newGatedHandler(0)
		a, relay := handOverNode(t, d, outboxConfig(), clock.Now, h)
		publishTx(t, a, d, testEvent{N: 0})
		<-h.entered
		id := publishTx(t, a, d, testEvent{N: 1}) // waits in the hand-over behind event 0
		// the relay is told to stop while it forwards event 0
		relay.cancel()
		close(h.release)
		if err := errors.Join(relay.stop(), a.Stop(ctx)); err != nil {
			t.Fatal(err)
		}
		r := rowOf(t, d, id)
		if r.Status == event.OutboxCompleted {
			if h.count(id) != 1 {
				t.Fatalf("event 1 completed but handled %d times", h.count(id))
			}
			return // the relay took the wake-up before the stop: forwarded, nothing left to release
		}
		if r.Status != event.OutboxPending || !r.RetryAfter.IsZero() {
			t.Fatalf("row left %s until %v at the stop, want pending without a lease", r.Status, r.RetryAfter)
		}
		b, _ := sinkBus(t, d, outboxConfig(), clock) // another node, same clock: no lease has expired
		if n, err := outboxOf(b).RelayOnce(ctx); n != 1 || err != nil {
			t.Fatalf("the other node claimed %d, %v, want the released row", n, err)
		}
	})
}
