package event

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"go.opentelemetry.io/otel/trace"
)

// Deps are what the bus needs from the server.
type Deps struct {
	// DB is the primary data source: outbox and inbox tables. Required when the outbox or the
	// inbox middleware is enabled.
	DB *db.DB
	// Redis is the key-value store client; nil when svc.kvstore is disabled. Required by
	// kvstore_stream.
	Redis *redis.Client
	// Logger receives the bus's logs; nil discards them.
	Logger *slog.Logger
	// Clock is the time source (default time.Now).
	Clock func() time.Time
	// AppName is svc.app.name: the default Envelope.Source.
	AppName string
	// RequestID returns the request id a context carries (the rpc request info), the default
	// CorrelationID; nil leaves it empty.
	RequestID func(ctx context.Context) string
	// Tracer makes the publish and consume spans of the tracing middleware
	// (svc.event.middleware.tracing) when OpenTelemetry tracing is on; nil makes none, and the
	// envelope's trace ids still continue any span the publishing context carries.
	Tracer trace.TracerProvider
	// Transports are the transport factories by name (config.Transport*): memory.New,
	// memory.NewTx, outbox.New and kvstream.New of the subpackages, which import this package.
	// New builds the transports svc.event enables from them; an enabled one without a factory
	// fails New with ErrTransportNotFound.
	Transports map[string]Factory
}

// Bus states.
const (
	stateNew int32 = iota
	stateStarted
	stateStopped
)

// Bus is the event bus of svc.event (spec §6.1, wire-runtime §2): routing over the memory,
// tx_memory, outbox and kvstore_stream transports, the middleware chain and the inbox. Its
// background jobs (outbox relay and cleanup, inbox cleanup, stream reaper and group sweeper) are
// listed by Workers for the caller's worker runtime; Start does not run them.
type Bus struct {
	cfg        config.Event
	deps       Deps
	tracer     trace.Tracer // nil unless Deps.Tracer is set
	log        *slog.Logger
	now        func() time.Time
	metrics    *Metrics
	transports map[string]Transport
	router     *router
	inbox      *inboxStore

	state   atomic.Int32
	asyncMu sync.RWMutex // held for reading while enqueueing; Stop closes async under the lock
	async   chan asyncJob
	asyncWG sync.WaitGroup
}

var _ PubSub = (*Bus)(nil)

// asyncJob is one queued asynchronous publish.
type asyncJob struct {
	ctx context.Context
	env *Envelope
	rt  *route
}

// New builds the bus from cfg (already defaulted and validated by package config) and deps. It
// does no I/O; Start starts transports and workers.
func New(cfg config.Event, deps Deps) (*Bus, error) {
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Clock == nil {
		deps.Clock = time.Now
	}
	b := &Bus{cfg: cfg, deps: deps, log: deps.Logger, now: deps.Clock, metrics: newMetrics()}
	if deps.Tracer != nil {
		b.tracer = deps.Tracer.Tracer(tracerName)
	}
	t := cfg.Transports
	if cfg.Middleware.Inbox {
		if deps.DB == nil {
			return nil, fmt.Errorf("svc.event.middleware.inbox: no database: %w", ErrTransportNotFound)
		}
		if t.Outbox.Enabled {
			if h := config.OutboxRetryHorizon(t.Outbox.MaxRetries); cfg.Inbox.Retention <= h {
				return nil, fmt.Errorf("svc.event.inbox.retention %s: must exceed the outbox retry horizon %s: %w",
					cfg.Inbox.Retention, h, config.ErrInboxRetentionTooShort)
			}
		}
		b.inbox = &inboxStore{db: deps.DB}
	}
	if err := b.buildTransports(); err != nil {
		return nil, err
	}
	r, err := newRouter(cfg, b.transports)
	if err != nil {
		return nil, err
	}
	b.router = r
	return b, nil
}

// Start starts the transports and the async publish workers. Subscriptions made before Start
// begin receiving now. The background jobs of Workers are the caller's to run, after Start. A
// failure stops what was started.
func (b *Bus) Start(ctx context.Context) error {
	if !b.state.CompareAndSwap(stateNew, stateStarted) {
		return ErrBusAlreadyStarted
	}
	for name, t := range b.transports {
		if err := t.Start(ctx); err != nil {
			b.state.Store(stateStopped)
			_ = b.stopTransports(context.WithoutCancel(ctx))
			return fmt.Errorf("event: start transport %s: %w", name, err)
		}
	}
	b.async = make(chan asyncJob, b.cfg.AsyncQueueSize)
	for range b.cfg.AsyncWorkers {
		b.asyncWG.Go(b.drainAsync)
	}
	return nil
}

// Stop refuses new publishes, flushes the async queue and stops the transports (their queues
// drained, consumers finished) within ctx; past it, ErrShutdownTimeout. The caller stops the
// Workers first (the server stops every worker before any module).
func (b *Bus) Stop(ctx context.Context) error {
	if !b.state.CompareAndSwap(stateStarted, stateStopped) {
		return nil
	}
	b.asyncMu.Lock()
	close(b.async)
	b.asyncMu.Unlock()
	var errs []error
	errs = append(errs, Wait(ctx, &b.asyncWG))
	errs = append(errs, b.stopTransports(ctx))
	return errors.Join(errs...)
}

// stopTransports stops the publish-only transports first (the outbox feeds its sink), then the
// others.
func (b *Bus) stopTransports(ctx context.Context) error {
	var errs []error
	for _, publishOnly := range []bool{true, false} {
		for _, t := range b.transports {
			if t.Capabilities().PublishOnly == publishOnly {
				errs = append(errs, t.Stop(ctx))
			}
		}
	}
	return errors.Join(errs...)
}

// host is what the bus hands the factory of transport name.
func (b *Bus) host(name string, lookup func(string) (Transport, error)) Host {
	return Host{Name: name, Config: b.cfg, DB: b.deps.DB, Redis: b.deps.Redis, Logger: b.log, Now: b.now,
		Metrics: b.metrics, Lookup: lookup}
}

// Transport returns the transport name when svc.event enables it (tests and tools drive the
// outbox relay or the stream reaper through it).
func (b *Bus) Transport(name string) (Transport, bool) {
	t, ok := b.transports[name]
	return t, ok
}

// Publish sends evt along its route (wire-runtime §2.1, §2.2). With InTx only the route's
// transactional transports are written, inside the transaction; with Async the publish is
// queued. A nil error only says the transports accepted the event.
func (b *Bus) Publish(ctx context.Context, evt Event, opts ...PublishOption) (err error) {
	if b.state.Load() != stateStarted {
		return ErrBusNotStarted
	}
	var o publishOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.tx != nil && o.async {
		return ErrTxAsyncMutex
	}
	if b.cfg.Middleware.Tracing && evt != nil {
		var end func(error)
		ctx, end = b.startPublishSpan(ctx, evt.EventType())
		defer func() { end(err) }()
	}
	env, err := b.newEnvelope(ctx, evt, &o)
	if err != nil {
		return err
	}
	return b.send(ctx, env, &o)
}

// PublishBatch publishes evts in order with the same options; it stops at the first error, which
// names the index. The events of one transactional batch commit together.
func (b *Bus) PublishBatch(ctx context.Context, evts []Event, opts ...PublishOption) error {
	for i, evt := range evts {
		if err := b.Publish(ctx, evt, opts...); err != nil {
			return fmt.Errorf("event: batch item %d: %w", i, err)
		}
	}
	return nil
}

// send delivers env synchronously, or queues it when asked.
func (b *Bus) send(ctx context.Context, env *Envelope, o *publishOptions) error {
	rt := b.router.resolve(env.Type)
	if o.tx != nil {
		if len(rt.tx) == 0 {
			return fmt.Errorf("%s: event %s: %w", rt.rule, env.Type, ErrTxRequired)
		}
		for _, t := range rt.tx {
			if err := t.PublishTx(ctx, o.tx, env); err != nil {
				b.metrics.publishFailed(env.Type)
				return err
			}
		}
		b.metrics.published(env.Type)
		return nil
	}
	if o.async {
		b.asyncMu.RLock()
		queued := false
		if b.state.Load() == stateStarted {
			select {
			case b.async <- asyncJob{ctx: context.WithoutCancel(ctx), env: env, rt: rt}:
				queued = true
			default:
			}
		}
		b.asyncMu.RUnlock()
		if queued {
			return nil
		}
		b.metrics.asyncFallbacks.Add(1)
		if err := b.deliver(ctx, env, rt); err != nil {
			return fmt.Errorf("%w: synchronous fallback: %w", ErrAsyncQueueFull, err)
		}
		return nil
	}
	return b.deliver(ctx, env, rt)
}

// deliver writes env to the direct transports of rt.
func (b *Bus) deliver(ctx context.Context, env *Envelope, rt *route) error {
	var errs []error
	for _, t := range rt.direct {
		if err := t.Publish(ctx, env); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		b.metrics.publishFailed(env.Type)
		return err
	}
	b.metrics.published(env.Type)
	return nil
}

// drainAsync is one async worker: it publishes queued events until the queue is closed and
// empty. Errors go to the log (the error sink) and the metrics.
func (b *Bus) drainAsync() {
	for job := range b.async {
		if err := b.deliver(job.ctx, job.env, job.rt); err != nil {
			b.log.Error("event: async publish failed", "type", job.env.Type, "id", job.env.ID, "err", err)
		}
	}
}

// Subscribe registers h for events of exactly eventType on every subscribable transport of the
// type's route (wire-runtime §2.1, §2.2). A route with an at-least-once transport needs
// WithGroup (ErrGroupRequired); a route that lists the outbox without its sink fails with
// ErrSinkMissing naming the rule. Subscriptions made before Start are kept and start with it.
func (b *Bus) Subscribe(eventType string, h Handler, opts ...SubscribeOption) (Unsubscribe, error) {
	if !ValidType(eventType) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidEventType, eventType)
	}
	if h == nil {
		return nil, fmt.Errorf("event: subscribe %s: nil handler", eventType)
	}
	o := subscribeOptions{concurrency: 1}
	for _, opt := range opts {
		opt(&o)
	}
	o.concurrency = max(o.concurrency, 1)
	rt := b.router.resolve(eventType)
	if rt.sinkMissing {
		return nil, fmt.Errorf("%s: subscribers of %s: the rule must list the outbox sink %q: %w",
			rt.rule, eventType, b.cfg.Transports.Outbox.Sink, ErrSinkMissing)
	}
	if rt.atLeastOnce && o.group == "" {
		return nil, fmt.Errorf("%s: subscribe %s: %w", rt.rule, eventType, ErrGroupRequired)
	}
	var subs []*Subscription
	var ts []Transport
	undo := func() {
		for i, s := range subs {
			ts[i].Unsubscribe(s)
		}
	}
	for _, name := range rt.subscribe {
		t := b.transports[name]
		s := &Subscription{EventType: eventType, Group: o.group, Concurrency: o.concurrency,
			Handler: b.chain(h, name, rt.atLeastOnce, o.group)}
		if err := t.Subscribe(s); err != nil {
			undo()
			return nil, fmt.Errorf("event: subscribe %s on %s: %w", eventType, name, err)
		}
		subs, ts = append(subs, s), append(ts, t)
	}
	var once sync.Once
	return func() { once.Do(undo) }, nil
}

// Metrics returns the bus's counters.
func (b *Bus) Metrics() *Metrics { return b.metrics }
