package memory

import (
	"context"
	"errors"
	"github.com/svc-framework/svc/event"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
)

// blockedBus is a bus with one subscription whose handler waits on release, so its queue fills.
func blockedBus(t *testing.T, mutate func(*config.Event)) (*event.Bus, chan struct{}, *atomic.Int64, chan int) {
	t.Helper()
	cfg := defaultConfig()
	cfg.Transports.Memory.QueueSize = 2
	mutate(&cfg)
	b := newBus(t, cfg, event.Deps{})
	release := make(chan struct{})
	var handled atomic.Int64
	seen := make(chan int, 100)
	entered := make(chan struct{}, 1)
	_, _ = b.Subscribe("svc.test.happened", func(_ context.Context, env *event.Envelope) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		handled.Add(1)
		seen <- env.Payload.(testEvent).N
		return nil
	})
	start(t, b)
	_ = b.Publish(context.Background(), testEvent{N: 0})
	<-entered // the worker holds event 0; the queue is empty
	return b, release, &handled, seen
}

// TestMemoryFullPolicies: error fails at once with ErrQueueFull; block waits for room and fails
// after publish_timeout; drop_oldest keeps the newest events.
func TestMemoryFullPolicies(t *testing.T) {
	t.Parallel()
	t.Run("error", func(t *testing.T) {
		b, release, _, _ := blockedBus(t, func(*config.Event) {})
		defer close(release)
		for i := 1; i <= 2; i++ {
			if err := b.Publish(context.Background(), testEvent{N: i}); err != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
		}
		if err := b.Publish(context.Background(), testEvent{N: 3}); !errors.Is(err, event.ErrQueueFull) {
			t.Errorf("err = %v, want ErrQueueFull", err)
		}
	})
	t.Run("block times out", func(t *testing.T) {
		b, release, _, _ := blockedBus(t, func(c *config.Event) {
			c.Transports.Memory.FullPolicy = config.FullPolicyBlock
			c.Transports.Memory.PublishTimeout = 20 * time.Millisecond
		})
		defer close(release)
		_ = b.Publish(context.Background(), testEvent{N: 1})
		_ = b.Publish(context.Background(), testEvent{N: 2})
		if err := b.Publish(context.Background(), testEvent{N: 3}); !errors.Is(err, event.ErrQueueFull) {
			t.Errorf("err = %v, want ErrQueueFull after the timeout", err)
		}
	})
	t.Run("block waits for room", func(t *testing.T) {
		b, release, handled, _ := blockedBus(t, func(c *config.Event) { c.Transports.Memory.FullPolicy = config.FullPolicyBlock })
		_ = b.Publish(context.Background(), testEvent{N: 1})
		_ = b.Publish(context.Background(), testEvent{N: 2})
		done := make(chan error, 1)
		go func() { done <- b.Publish(context.Background(), testEvent{N: 3}) }()
		close(release)
		if err := <-done; err != nil {
			t.Errorf("blocked publish = %v, want nil once room appeared", err)
		}
		eventually(t, 5*time.Second, func() bool { return handled.Load() == 4 }, "all four handled")
	})
	t.Run("drop_oldest", func(t *testing.T) {
		b, release, handled, seen := blockedBus(t, func(c *config.Event) { c.Transports.Memory.FullPolicy = config.FullPolicyDropOldest })
		for i := 1; i <= 5; i++ {
			if err := b.Publish(context.Background(), testEvent{N: i}); err != nil {
				t.Fatal(err)
			}
		}
		close(release)
		eventually(t, 5*time.Second, func() bool { return handled.Load() == 3 }, "event 0 and the two newest")
		var got []int
		for range 3 {
			got = append(got, <-seen)
		}
		if got[0] != 0 || got[1] != 4 || got[2] != 5 {
			t.Errorf("handled %v, want [0 4 5]", got)
		}
		if d := b.Metrics().Snapshot().Dropped; d != 3 {
			t.Errorf("Dropped = %d, want 3", d)
		}
	})
}

// TestMemoryOrderAndConcurrency: with concurrency 1 events arrive in publish order; with
// concurrency 4 handlers overlap.
func TestMemoryOrderAndConcurrency(t *testing.T) {
	t.Parallel()
	b := newBus(t, defaultConfig(), event.Deps{})
	var mu sync.Mutex
	var order []int
	_, _ = b.Subscribe("svc.test.happened", func(_ context.Context, env *event.Envelope) error {
		mu.Lock()
		order = append(order, env.Payload.(testEvent).N)
		mu.Unlock()
		return nil
	})
	var inFlight, peak atomic.Int64
	gate := make(chan struct{})
	_, _ = b.Subscribe("svc.other.happened", func(context.Context, *event.Envelope) error {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-gate
		inFlight.Add(-1)
		return nil
	}, event.WithConcurrency(4))
	start(t, b)
	for i := range 100 {
		_ = b.Publish(context.Background(), testEvent{N: i})
	}
	for range 4 {
		_ = b.Publish(context.Background(), otherEvent{})
	}
	eventually(t, 5*time.Second, func() bool { return peak.Load() == 4 }, "four handlers at once")
	close(gate)
	eventually(t, 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == 100 }, "100 deliveries")
	for i, n := range order {
		if n != i {
			t.Fatalf("order[%d] = %d, want %d", i, n, i)
		}
	}
}
