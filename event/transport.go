package event

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/waitgroup"
	"github.com/uptrace/bun"
)

// This file is the transport SPI: what a transport implements (Transport, TxTransport and the
// optional Deliverer and StreamInspector), what the bus hands its Factory (Host) and the Worker
// spec of the background jobs. The transports live in the subpackages event/memory (memory and
// tx_memory), event/outbox and event/kvstream, which import this package; this package imports
// none of them. Whoever builds a bus passes their factories in Deps.Transports (package svc
// passes all four), and New builds those svc.event enables.

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
	// Start starts delivering to the subscriptions. It starts no background job: those are
	// Workers, which the caller runs.
	Start(ctx context.Context) error
	// Stop stops delivering and drains the transport within ctx.
	Stop(ctx context.Context) error
	// Workers are the transport's background jobs (relay, cleanup, reaper, …), named within the
	// transport ("relay"); nil when it has none. Their bodies may run once Start returned and
	// return when their ctx ends; Bus.Workers lists them.
	Workers() []Worker
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
	// Metrics are the bus's counters; transports add to the Count* ones.
	Metrics *Metrics
	// Lookup returns another transport of the bus, building it first if New has not yet (the
	// outbox looks its sink up), or the error that transport's build failed with
	// (ErrTransportNotFound when svc.event does not enable it or Deps.Transports has no factory
	// for it).
	Lookup func(name string) (Transport, error)
}

// Factory builds a transport. It does no I/O.
type Factory func(h Host) (Transport, error)

// Worker is a background job of the bus or of a transport: the outbox relay, its PostgreSQL
// listener and announcer and its cleanup, the inbox cleanup, the stream reaper and group
// sweeper. The bus runs none of them: Bus.Workers lists them, and package svc hands them to the
// server's one worker runtime (app.Workers: panic recovery, logging, stop at shutdown) as the
// event module's workers. The fields mean what app.Worker's do: with Interval > 0 Run is called
// every Interval, the first call after one Interval; with Interval == 0 Run is called again as
// soon as it returns (a loop that waits on its own wake-ups until ctx ends), after a short
// back-off when it returned an error.
type Worker struct {
	// Name names the job within its owner ("relay"); Bus.Workers prefixes the transport's name.
	Name string
	// Interval is the period, or 0 for a loop.
	Interval time.Duration
	// Run is the job's body.
	Run func(ctx context.Context) error
}

// Wait waits for wg, or fails with ErrShutdownTimeout when ctx ends first.
func Wait(ctx context.Context, wg *sync.WaitGroup) error {
	if err := waitgroup.Wait(ctx, wg); err != nil {
		return fmt.Errorf("%w: %w", ErrShutdownTimeout, err)
	}
	return nil
}

// enabledTransports are the transports svc.event enables, by name in a fixed order: memory
// always, the others when their enabled key is set.
func enabledTransports(t config.EventTransports) []string {
	names := []string{config.TransportMemory}
	for _, o := range []struct {
		name string
		on   bool
	}{
		{config.TransportTxMemory, t.TxMemory.Enabled},
		{config.TransportKVStoreStream, t.KVStoreStream.Enabled},
		{config.TransportOutbox, t.Outbox.Enabled},
	} {
		if o.on {
			names = append(names, o.name)
		}
	}
	return names
}

// buildTransports builds every enabled transport from its factory in Deps.Transports. A
// factory may look up another transport (the outbox its sink), which is built then; each is
// built once, and a transport that depends on itself fails.
func (b *Bus) buildTransports() error {
	enabled := enabledTransports(b.cfg.Transports)
	b.transports = map[string]Transport{}
	failed := map[string]error{}
	building := map[string]bool{}
	var build func(name string) (Transport, error)
	build = func(name string) (Transport, error) {
		if t, ok := b.transports[name]; ok {
			return t, nil
		}
		if err, ok := failed[name]; ok {
			return nil, err
		}
		f, ok := b.deps.Transports[name]
		var err error
		switch {
		case !slices.Contains(enabled, name):
			err = fmt.Errorf("svc.event.transports.%s: not enabled: %w", name, ErrTransportNotFound)
		case !ok:
			err = fmt.Errorf("svc.event.transports.%s: no factory in event.Deps.Transports: %w", name, ErrTransportNotFound)
		case building[name]:
			err = fmt.Errorf("svc.event.transports.%s: depends on itself: %w", name, ErrTransportNotFound)
		}
		if err != nil {
			failed[name] = err
			return nil, err
		}
		building[name] = true
		t, err := f(b.host(name, build))
		if err != nil {
			failed[name] = err
			return nil, err
		}
		b.transports[name] = t
		return t, nil
	}
	for _, name := range enabled {
		if _, err := build(name); err != nil {
			return err
		}
	}
	return nil
}

// Workers are the background jobs of the bus and its transports: the inbox cleanup
// (inbox.cleanup, with the inbox middleware on) and each transport's, named
// <transport>.<job> (outbox.relay, outbox.cleanup, on PostgreSQL outbox.listener and
// outbox.announcer; kvstore_stream.reaper and kvstore_stream.group_sweep). The bus runs none of
// them: package svc lists them as the event module's workers, so the server's worker runtime
// runs them from after every module started until before any stops. A tool or test that
// builds a bus runs them itself or calls their bodies (RelayOnce, Reap, Cleanup) directly.
func (b *Bus) Workers() []Worker {
	var ws []Worker
	if b.inbox != nil {
		ws = append(ws, Worker{Name: "inbox.cleanup", Interval: b.cfg.Inbox.CleanupInterval, Run: b.cleanupInbox})
	}
	for _, name := range slices.Sorted(maps.Keys(b.transports)) {
		for _, w := range b.transports[name].Workers() {
			w.Name = name + "." + w.Name
			ws = append(ws, w)
		}
	}
	return ws
}
