package event

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/uptrace/bun"
)

// memoryTransport is the in-process transport (wire-runtime §2.3 memory), and with tx set the
// private tx_memory instance: ordered, at-most-once, no groups. Each subscription has its own
// queue of queueSize; a full queue follows the full policy. Handler errors are logged, never
// retried.
type memoryTransport struct {
	name       string
	queueSize  int
	policy     config.FullPolicy
	timeout    time.Duration // block policy bound; 0 = none
	tx         bool
	log        *slog.Logger
	metrics    *Metrics
	mu         sync.RWMutex
	subs       map[string][]*memorySub
	started    bool
	stopped    bool
	wg         sync.WaitGroup
	handlerCtx context.Context
}

// memorySub is one subscription's queue and workers.
type memorySub struct {
	s  *subscription
	ch chan *Envelope
}

var (
	_ transport   = (*memoryTransport)(nil)
	_ txTransport = (*memoryTransport)(nil)
)

func newMemoryTransport(name string, size int, policy config.FullPolicy, timeout time.Duration, tx bool, log *slog.Logger, m *Metrics) *memoryTransport {
	return &memoryTransport{
		name: name, queueSize: size, policy: policy, timeout: timeout, tx: tx,
		log: log, metrics: m, subs: map[string][]*memorySub{}, handlerCtx: context.Background(),
	}
}

func (m *memoryTransport) caps() capabilities { return capabilities{transactional: m.tx} }

func (m *memoryTransport) subscribe(s *subscription) error {
	ms := &memorySub{s: s, ch: make(chan *Envelope, m.queueSize)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return ErrBusNotStarted
	}
	m.subs[s.eventType] = append(m.subs[s.eventType], ms)
	if m.started {
		m.run(ms)
	}
	return nil
}

func (m *memoryTransport) unsubscribe(s *subscription) {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.subs[s.eventType]
	for i, ms := range list {
		if ms.s == s {
			m.subs[s.eventType] = append(list[:i:i], list[i+1:]...)
			close(ms.ch) // its workers finish what is queued, then exit
			return
		}
	}
}

func (m *memoryTransport) start(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started = true
	for _, list := range m.subs {
		for _, ms := range list {
			m.run(ms)
		}
	}
	return nil
}

// run starts the workers of ms (caller holds m.mu).
func (m *memoryTransport) run(ms *memorySub) {
	for range max(ms.s.concurrency, 1) {
		m.wg.Go(func() {
			for env := range ms.ch {
				if err := ms.s.handler(m.handlerCtx, env); err != nil {
					m.log.Warn("event: handler failed", "transport", m.name, "type", env.Type, "id", env.ID, "err", err)
				}
			}
		})
	}
}

// stop closes every queue so the workers drain it, and waits for them within ctx.
func (m *memoryTransport) stop(ctx context.Context) error {
	m.mu.Lock()
	if !m.stopped {
		m.stopped = true
		for _, list := range m.subs {
			for _, ms := range list {
				close(ms.ch)
			}
		}
		m.subs = map[string][]*memorySub{}
	}
	m.mu.Unlock()
	return waitGroup(ctx, &m.wg)
}

// publish enqueues env on every subscription of its type, following the full policy; the
// errors of several full queues are joined.
func (m *memoryTransport) publish(ctx context.Context, env *Envelope) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.stopped {
		return ErrBusNotStarted
	}
	var errs []error
	for _, ms := range m.subs[env.Type] {
		if err := m.enqueue(ctx, ms, env); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *memoryTransport) enqueue(ctx context.Context, ms *memorySub, env *Envelope) error {
	select {
	case ms.ch <- env:
		return nil
	default:
	}
	switch m.policy {
	case config.FullPolicyBlock:
		var expired <-chan time.Time
		if m.timeout > 0 {
			t := time.NewTimer(m.timeout)
			defer t.Stop()
			expired = t.C
		}
		select {
		case ms.ch <- env:
			return nil
		case <-expired:
			return fmt.Errorf("%s %s: blocked %s: %w", m.name, env.Type, m.timeout, ErrQueueFull)
		case <-ctx.Done():
			return fmt.Errorf("%s %s: %w: %w", m.name, env.Type, ErrQueueFull, ctx.Err())
		}
	case config.FullPolicyDropOldest:
		for {
			select {
			case ms.ch <- env:
				return nil
			default:
			}
			select {
			case <-ms.ch:
				m.metrics.dropped.Add(1)
			default:
			}
		}
	default:
		return fmt.Errorf("%s %s: %w", m.name, env.Type, ErrQueueFull)
	}
}

// deliverNow runs the handlers of env's subscriptions in the caller's goroutine and joins their
// errors. The outbox relay uses it when the sink is in-process, so a row is completed only after
// every subscriber handled the event: a crash before that leaves the row to be relayed again
// (at-least-once, deduplicated by the inbox), where a queued delivery would be lost with the
// process.
func (m *memoryTransport) deliverNow(ctx context.Context, env *Envelope) error {
	m.mu.RLock()
	if m.stopped {
		m.mu.RUnlock()
		return ErrBusNotStarted
	}
	subs := m.subs[env.Type]
	m.mu.RUnlock()
	var errs []error
	for _, ms := range subs {
		if err := ms.s.handler(ctx, env); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", m.name, env.Type, err))
		}
	}
	return errors.Join(errs...)
}

// publishTx defers the publish to the commit of the TxScope in ctx (tx_memory): a rollback
// delivers nothing, and deliveries follow commit order, not publish order.
func (m *memoryTransport) publishTx(ctx context.Context, _ bun.IDB, env *Envelope) error {
	scope := ScopeFrom(ctx)
	if scope == nil {
		return fmt.Errorf("%s %s: %w", m.name, env.Type, ErrTxScopeRequired)
	}
	scope.AfterCommit(func(ctx context.Context) {
		if err := m.publish(ctx, env); err != nil {
			m.log.Error("event: delivery after commit failed", "transport", m.name, "type", env.Type, "id", env.ID, "err", err)
		}
	})
	return nil
}

// waitGroup waits for wg, or fails with ErrShutdownTimeout when ctx ends first.
func waitGroup(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrShutdownTimeout, ctx.Err())
	}
}
