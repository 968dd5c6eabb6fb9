package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/uptrace/bun"
)

// Transport is the in-process transport (wire-runtime §2.3 memory), and with tx set the
// private tx_memory instance: ordered, at-most-once, no groups. Each subscription has its own
// queue of queueSize; a full queue follows the full policy. Handler errors are logged, never
// retried.
type Transport struct {
	name       string
	queueSize  int
	policy     config.FullPolicy
	timeout    time.Duration // block policy bound; 0 = none
	tx         bool
	log        *slog.Logger
	metrics    *event.Metrics
	mu         sync.RWMutex
	subs       map[string][]*memorySub
	started    bool
	stopped    bool
	wg         sync.WaitGroup
	handlerCtx context.Context
}

// memorySub is one subscription's queue and workers.
type memorySub struct {
	s  *event.Subscription
	ch chan *event.Envelope
}

var (
	_ event.TxTransport = (*Transport)(nil)
	_ event.Deliverer   = (*Transport)(nil)
)

// New is the memory transport's event.Factory (svc.event.transports.memory).
func New(h event.Host) (event.Transport, error) {
	m := h.Config.Transports.Memory
	return newTransport(h.Name, m.QueueSize, m.FullPolicy, m.PublishTimeout, false, h.Logger, h.Metrics), nil
}

// NewTx is the tx_memory transport's event.Factory (svc.event.transports.tx_memory). It warns
// that the transport loses its events on a crash.
func NewTx(h event.Host) (event.Transport, error) {
	h.Logger.Warn("event: tx_memory is enabled: transactional events are delivered in-process only and are lost on a crash")
	m := h.Config.Transports.TxMemory
	return newTransport(h.Name, m.QueueSize, m.FullPolicy, m.PublishTimeout, true, h.Logger, h.Metrics), nil
}

// newTransport builds a memory transport named name: a queue of size per subscription, the full
// policy and its block timeout (0: none); tx makes it tx_memory (delivery after the commit of
// the TxScope in the publishing context).
func newTransport(name string, size int, policy config.FullPolicy, timeout time.Duration, tx bool, log *slog.Logger, m *event.Metrics) *Transport {
	return &Transport{
		name: name, queueSize: size, policy: policy, timeout: timeout, tx: tx,
		log: log, metrics: m, subs: map[string][]*memorySub{}, handlerCtx: context.Background(),
	}
}

// Workers: none; a subscription's handlers run from Start to Stop.
func (m *Transport) Workers() []event.Worker { return nil }

// Capabilities: transactional for tx_memory.
func (m *Transport) Capabilities() event.Capabilities { return event.Capabilities{Transactional: m.tx} }

// Subscribe gives s its queue; after Start its workers start at once.
func (m *Transport) Subscribe(s *event.Subscription) error {
	ms := &memorySub{s: s, ch: make(chan *event.Envelope, m.queueSize)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return event.ErrBusNotStarted
	}
	m.subs[s.EventType] = append(m.subs[s.EventType], ms)
	if m.started {
		m.run(ms)
	}
	return nil
}

// Unsubscribe closes the queue of s; its workers finish what is queued.
func (m *Transport) Unsubscribe(s *event.Subscription) {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.subs[s.EventType]
	for i, ms := range list {
		if ms.s == s {
			m.subs[s.EventType] = append(list[:i:i], list[i+1:]...)
			close(ms.ch) // its workers finish what is queued, then exit
			return
		}
	}
}

// Start starts the workers of every subscription.
func (m *Transport) Start(context.Context) error {
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
func (m *Transport) run(ms *memorySub) {
	for range max(ms.s.Concurrency, 1) {
		m.wg.Go(func() {
			for env := range ms.ch {
				if err := ms.s.Handler(m.handlerCtx, env); err != nil {
					m.log.Warn("event: handler failed", "transport", m.name, "type", env.Type, "id", env.ID, "err", err)
				}
			}
		})
	}
}

// Stop closes every queue so the workers drain it, and waits for them within ctx.
func (m *Transport) Stop(ctx context.Context) error {
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
	return event.Wait(ctx, &m.wg)
}

// Publish enqueues env on every subscription of its type, following the full policy; the
// errors of several full queues are joined.
func (m *Transport) Publish(ctx context.Context, env *event.Envelope) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.stopped {
		return event.ErrBusNotStarted
	}
	var errs []error
	for _, ms := range m.subs[env.Type] {
		if err := m.enqueue(ctx, ms, env); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Transport) enqueue(ctx context.Context, ms *memorySub, env *event.Envelope) error {
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
			return fmt.Errorf("%s %s: blocked %s: %w", m.name, env.Type, m.timeout, event.ErrQueueFull)
		case <-ctx.Done():
			return fmt.Errorf("%s %s: %w: %w", m.name, env.Type, event.ErrQueueFull, ctx.Err())
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
				m.metrics.CountDropped(1)
			default:
			}
		}
	default:
		return fmt.Errorf("%s %s: %w", m.name, env.Type, event.ErrQueueFull)
	}
}

// DeliverNow runs the handlers of env's subscriptions in the caller's goroutine and joins their
// errors. The outbox relay uses it when the sink is in-process, so a row is completed only after
// every subscriber handled the event: a crash before that leaves the row to be relayed again
// (at-least-once, deduplicated by the inbox), where a queued delivery would be lost with the
// process.
func (m *Transport) DeliverNow(ctx context.Context, env *event.Envelope) error {
	m.mu.RLock()
	if m.stopped {
		m.mu.RUnlock()
		return event.ErrBusNotStarted
	}
	subs := m.subs[env.Type]
	m.mu.RUnlock()
	var errs []error
	for _, ms := range subs {
		if err := ms.s.Handler(ctx, env); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", m.name, env.Type, err))
		}
	}
	return errors.Join(errs...)
}

// PublishTx defers the publish to the commit of the TxScope in ctx (tx_memory): a rollback
// delivers nothing, and deliveries follow commit order, not publish order.
func (m *Transport) PublishTx(ctx context.Context, _ bun.IDB, env *event.Envelope) error {
	scope := event.ScopeFrom(ctx)
	if scope == nil {
		return fmt.Errorf("%s %s: %w", m.name, env.Type, event.ErrTxScopeRequired)
	}
	scope.AfterCommit(func(ctx context.Context) {
		if err := m.Publish(ctx, env); err != nil {
			m.log.Error("event: delivery after commit failed", "transport", m.name, "type", env.Type, "id", env.ID, "err", err)
		}
	})
	return nil
}
