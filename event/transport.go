package event

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/uptrace/bun"
)

// This file is the transport SPI: what a transport implements (Transport, TxTransport and the
// optional Deliverer and StreamInspector) and what the bus hands it (Host). The transports live
// in the subpackages event/memory (memory and tx_memory), event/outbox and event/kvstream; each
// registers its Factory with RegisterTransport from an init function, and New builds the
// transports that svc.event enables from the registered factories. A program links a transport
// by importing its package (package svc imports all of them; event/transports does the same for
// tools and tests).

// Capabilities describe a transport (wire-runtime §2.3); the router reads them.
type Capabilities struct {
	// Transactional: accepts a publish inside the caller's transaction (TxTransport).
	Transactional bool
	// AtLeastOnce: redelivers until a handler succeeds, so subscribers need a group and get the
	// inbox middleware.
	AtLeastOnce bool
	// PublishOnly: has no subscribers of its own (the outbox relays to its sink).
	PublishOnly bool
}

// Subscription is one handler registered on one transport. Handler is already wrapped in the
// middleware chain for that transport; a transport runs Concurrency handlers of it at once.
type Subscription struct {
	// EventType is the exact event type subscribed to.
	EventType string
	// Group is the consumer group ("" on routes without an at-least-once transport).
	Group string
	// Concurrency is the number of handlers run at once (≥ 1).
	Concurrency int
	// Handler handles one delivery.
	Handler Handler
}

// Transport is one transport of the bus. It keeps subscriptions made before Start and begins
// delivering at Start; Stop ends its workers and flushes what it queued, bounded by ctx.
type Transport interface {
	// Capabilities are constant for the transport's life.
	Capabilities() Capabilities
	// Publish accepts env (outside any transaction).
	Publish(ctx context.Context, env *Envelope) error
	// Subscribe attaches s.
	Subscribe(s *Subscription) error
	// Unsubscribe detaches s; its queued deliveries may still run.
	Unsubscribe(s *Subscription)
	// Start starts delivering and the transport's background workers (unless
	// Host.ManualWorkers).
	Start(ctx context.Context) error
	// Stop stops the workers and drains the transport within ctx.
	Stop(ctx context.Context) error
}

// TxTransport is a transactional transport: Publish inside the caller's transaction tx. A
// transport whose Capabilities say Transactional implements it.
type TxTransport interface {
	Transport
	// PublishTx publishes env as part of tx (or of the TxScope in ctx).
	PublishTx(ctx context.Context, tx bun.IDB, env *Envelope) error
}

// Deliverer is implemented by in-process transports: DeliverNow runs the handlers of env's
// subscriptions in the caller's goroutine and joins their errors. The outbox relay uses it when
// its sink is in-process, so a row is completed only after every subscriber handled the event.
type Deliverer interface {
	DeliverNow(ctx context.Context, env *Envelope) error
}

// StreamInspector is implemented by the stream transport: Bus.InspectStreams delegates to it.
type StreamInspector interface {
	InspectStreams(ctx context.Context) (StreamReport, error)
}

// Host is what the bus hands a transport's Factory.
type Host struct {
	// Name is the transport name the factory is called for (config.Transport*).
	Name string
	// Config is svc.event, defaulted and validated.
	Config config.Event
	// DB is Deps.DB (nil when the server has none).
	DB *db.DB
	// Redis is Deps.Redis (nil when svc.kvstore is off).
	Redis *redis.Client
	// Logger receives the transport's logs (never nil).
	Logger *slog.Logger
	// Now is the bus's clock.
	Now func() time.Time
	// NewID returns a fresh UUIDv7.
	NewID func() string
	// Metrics are the bus's counters; transports add to the Count* ones.
	Metrics *Metrics
	// ManualWorkers is Deps.ManualWorkers: Start must not start background workers (relay,
	// cleanup, reaper, sweeper); tests drive them by hand.
	ManualWorkers bool
	// Lookup returns a transport built before this one (New builds memory, tx_memory,
	// kvstore_stream, then outbox, so the outbox finds its sink).
	Lookup func(name string) (Transport, bool)
}

// Factory builds a transport. It does no I/O.
type Factory func(h Host) (Transport, error)

var (
	factoriesMu sync.RWMutex
	factories   = map[string]Factory{}
)

// RegisterTransport makes the transport name available to New. The transport packages call it
// from init; registering a name twice panics.
func RegisterTransport(name string, f Factory) {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	if _, dup := factories[name]; dup {
		panic("event: transport " + name + " registered twice")
	}
	factories[name] = f
}

// factory returns the factory of name, or an error naming the package to import.
func factory(name string) (Factory, error) {
	factoriesMu.RLock()
	f, ok := factories[name]
	factoriesMu.RUnlock()
	if !ok {
		pkg := map[string]string{config.TransportMemory: "memory", config.TransportTxMemory: "memory",
			config.TransportOutbox: "outbox", config.TransportKVStoreStream: "kvstream"}[name]
		return nil, fmt.Errorf("svc.event.transports.%s: not linked (import github.com/svc-framework/svc/event/%s): %w",
			name, pkg, ErrTransportNotFound)
	}
	return f, nil
}

// Wait waits for wg, or fails with ErrShutdownTimeout when ctx ends first.
func Wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrShutdownTimeout, ctx.Err())
	}
}

// Every runs fn each interval until ctx ends, logging its errors as "event: <name>".
func Every(ctx context.Context, interval time.Duration, log *slog.Logger, name string, fn func(context.Context) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := fn(ctx); err != nil && ctx.Err() == nil {
				log.Error("event: "+name, "err", err)
			}
		}
	}
}
