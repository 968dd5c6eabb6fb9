package config

import (
	"fmt"
	"math"
	"path"
	"time"
)

// Transport names of the event bus, used by svc.event.default_transport, the outbox sink and
// svc.event.routing[].transports.
const (
	TransportMemory        = "memory"
	TransportTxMemory      = "tx_memory"
	TransportOutbox        = "outbox"
	TransportKVStoreStream = "kvstore_stream"
)

// FullPolicy is what an in-process transport does when a subscription queue is full.
type FullPolicy string

// Full policies of transports.memory.full_policy and transports.tx_memory.full_policy.
const (
	// FullPolicyError fails the publish with a queue-full error (default).
	FullPolicyError FullPolicy = "error"
	// FullPolicyBlock waits for room, bounded by the transport's publish_timeout (unset = no
	// timeout).
	FullPolicyBlock FullPolicy = "block"
	// FullPolicyDropOldest drops the oldest queued event.
	FullPolicyDropOldest FullPolicy = "drop_oldest"
)

// Defaults of svc.event.
const (
	defaultAsyncQueueSize         = 4096
	defaultAsyncWorkers           = 4
	defaultPublishTimeout         = 5 * time.Second
	defaultMemoryQueueSize        = 1024
	defaultRelayInterval          = 10 * time.Second
	defaultOutboxMaxRetries       = 10
	defaultOutboxBatchSize        = 100
	defaultLeaseMultiplier        = 4
	defaultMinLease               = 15 * time.Second
	defaultOutboxCleanupInterval  = time.Hour
	defaultCompletedTTL           = 168 * time.Hour
	defaultStreamPrefix           = "svc:events:"
	defaultBlockTimeout           = 5 * time.Second
	defaultClaimIdle              = 60 * time.Second
	defaultClaimInterval          = 30 * time.Second
	defaultClaimBatchSize         = 64
	defaultReaperConcurrency      = 4
	defaultHandlerTimeout         = 30 * time.Second
	defaultSetupTimeout           = 5 * time.Second
	defaultConsumerID             = "svc"
	defaultStartID                = "0"
	defaultIdleGroupSweepInterval = 10 * time.Minute
	defaultInboxRetention         = 168 * time.Hour
	defaultInboxProcessingLease   = 10 * time.Minute
	defaultInboxCleanupInterval   = time.Hour
)

// Event is the svc.event section (spec §6.1): the event bus.
type Event struct {
	// DefaultTransport is svc.event.default_transport (default memory): the transport of events
	// no routing entry matches.
	DefaultTransport string `toml:"default_transport"`
	// AsyncQueueSize is svc.event.async_queue_size (default 4096): the bus queue of asynchronous
	// publishes; when full, publishing falls back to synchronous.
	AsyncQueueSize int `toml:"async_queue_size"`
	// AsyncWorkers is svc.event.async_workers (default 4): workers draining that queue.
	AsyncWorkers int `toml:"async_workers"`
	// PublishTimeout is svc.event.publish_timeout (default 5s): the bound of one publish, per
	// transport.
	PublishTimeout time.Duration `toml:"publish_timeout"`
	// Transports is svc.event.transports.
	Transports EventTransports `toml:"transports"`
	// Middleware is svc.event.middleware: handler middleware switches.
	Middleware EventMiddleware `toml:"middleware"`
	// Inbox is svc.event.inbox: consumer-side deduplication store.
	Inbox Inbox `toml:"inbox"`
	// Routing is svc.event.routing: rules matched top to bottom, first match wins; not
	// overridable from the environment.
	Routing []EventRoute `toml:"routing"`
}

// EventTransports is svc.event.transports.
type EventTransports struct {
	// Memory is svc.event.transports.memory: the in-process transport, always available.
	Memory MemoryTransport `toml:"memory"`
	// TxMemory is svc.event.transports.tx_memory.
	TxMemory TxMemoryTransport `toml:"tx_memory"`
	// Outbox is svc.event.transports.outbox.
	Outbox OutboxTransport `toml:"outbox"`
	// KVStoreStream is svc.event.transports.kvstore_stream.
	KVStoreStream KVStoreStreamTransport `toml:"kvstore_stream"`
}

// MemoryTransport is svc.event.transports.memory: ordered, at-most-once, one queue per
// subscription.
type MemoryTransport struct {
	// QueueSize is svc.event.transports.memory.queue_size (default 1024) per subscription.
	QueueSize int `toml:"queue_size"`
	// FullPolicy is svc.event.transports.memory.full_policy: error (default), block or
	// drop_oldest.
	FullPolicy FullPolicy `toml:"full_policy"`
	// PublishTimeout is svc.event.transports.memory.publish_timeout (default 0 = no timeout): how
	// long policy block waits for room.
	PublishTimeout time.Duration `toml:"publish_timeout"`
}

// TxMemoryTransport is svc.event.transports.tx_memory: a private in-process instance that
// delivers after commit; it does not persist.
type TxMemoryTransport struct {
	// Enabled is svc.event.transports.tx_memory.enabled (default false).
	Enabled bool `toml:"enabled"`
	// QueueSize is svc.event.transports.tx_memory.queue_size (default 1024).
	QueueSize int `toml:"queue_size"`
	// FullPolicy is svc.event.transports.tx_memory.full_policy: error (default), block or
	// drop_oldest.
	FullPolicy FullPolicy `toml:"full_policy"`
	// PublishTimeout is svc.event.transports.tx_memory.publish_timeout (default 0 = no timeout).
	PublishTimeout time.Duration `toml:"publish_timeout"`
}

// OutboxTransport is svc.event.transports.outbox: durable, transactional, publish-only; a relay
// forwards rows of sys_event_outbox to the sink.
type OutboxTransport struct {
	// Enabled is svc.event.transports.outbox.enabled (default false).
	Enabled bool `toml:"enabled"`
	// RelayInterval is svc.event.transports.outbox.relay_interval (default 10s).
	RelayInterval time.Duration `toml:"relay_interval"`
	// MaxRetries is svc.event.transports.outbox.max_retries (default 10): failures before an
	// event is dead-lettered.
	MaxRetries int `toml:"max_retries"`
	// BatchSize is svc.event.transports.outbox.batch_size (default 100): rows per relay tick.
	BatchSize int `toml:"batch_size"`
	// LeaseMultiplier is svc.event.transports.outbox.lease_multiplier (default 4): a claimed row's
	// lease is max(relay_interval × lease_multiplier, min_lease).
	LeaseMultiplier int `toml:"lease_multiplier"`
	// MinLease is svc.event.transports.outbox.min_lease (default 15s).
	MinLease time.Duration `toml:"min_lease"`
	// Sink is svc.event.transports.outbox.sink (default memory): the transport relayed to.
	Sink string `toml:"sink"`
	// CleanupInterval is svc.event.transports.outbox.cleanup_interval (default 1h).
	CleanupInterval time.Duration `toml:"cleanup_interval"`
	// CompletedTTL is svc.event.transports.outbox.completed_ttl (default 168h): completed rows
	// older than this are deleted.
	CompletedTTL time.Duration `toml:"completed_ttl"`
}

// KVStoreStreamTransport is svc.event.transports.kvstore_stream: durable, ordered,
// at-least-once, with consumer groups, over key-value store streams. Needs svc.kvstore.enabled.
type KVStoreStreamTransport struct {
	// Enabled is svc.event.transports.kvstore_stream.enabled (default false).
	Enabled bool `toml:"enabled"`
	// StreamPrefix is svc.event.transports.kvstore_stream.stream_prefix (default "svc:events:"):
	// prefix of the stream key, followed by the event type.
	StreamPrefix string `toml:"stream_prefix"`
	// MaxLenApprox is svc.event.transports.kvstore_stream.max_len_approx (default 0 = no
	// trimming): approximate stream length cap.
	MaxLenApprox int64 `toml:"max_len_approx"`
	// BlockTimeout is svc.event.transports.kvstore_stream.block_timeout (default 5s) per read.
	BlockTimeout time.Duration `toml:"block_timeout"`
	// ClaimIdle is svc.event.transports.kvstore_stream.claim_idle (default 60s): idle time after
	// which another consumer's pending entry is claimed.
	ClaimIdle time.Duration `toml:"claim_idle"`
	// ClaimInterval is svc.event.transports.kvstore_stream.claim_interval (default 30s): reaper
	// cadence.
	ClaimInterval time.Duration `toml:"claim_interval"`
	// ClaimBatchSize is svc.event.transports.kvstore_stream.claim_batch_size (default 64).
	ClaimBatchSize int `toml:"claim_batch_size"`
	// ReaperConcurrency is svc.event.transports.kvstore_stream.reaper_concurrency (default 4):
	// subscriptions reaped in parallel.
	ReaperConcurrency int `toml:"reaper_concurrency"`
	// HandlerTimeout is svc.event.transports.kvstore_stream.handler_timeout (default 30s) per
	// delivery.
	HandlerTimeout time.Duration `toml:"handler_timeout"`
	// SetupTimeout is svc.event.transports.kvstore_stream.setup_timeout (default 5s): consumer
	// group creation.
	SetupTimeout time.Duration `toml:"setup_timeout"`
	// ConsumerID is svc.event.transports.kvstore_stream.consumer_id (default "svc"): prefix of
	// consumer names (each process start is a new consumer).
	ConsumerID string `toml:"consumer_id"`
	// StartID is svc.event.transports.kvstore_stream.start_id (default "0" = deliver the
	// backlog; "$" skips it): where newly created groups start.
	StartID string `toml:"start_id"`
	// IdleGroupRetention is svc.event.transports.kvstore_stream.idle_group_retention (default 0 =
	// orphaned groups are never reclaimed).
	IdleGroupRetention time.Duration `toml:"idle_group_retention"`
	// IdleGroupSweepInterval is svc.event.transports.kvstore_stream.idle_group_sweep_interval
	// (default 10m).
	IdleGroupSweepInterval time.Duration `toml:"idle_group_sweep_interval"`
}

// EventMiddleware is svc.event.middleware: each key turns one handler middleware on (all
// default false).
type EventMiddleware struct {
	// Logging is svc.event.middleware.logging: structured logs per delivery.
	Logging bool `toml:"logging"`
	// Tracing is svc.event.middleware.tracing: trace ids and the traceparent header.
	Tracing bool `toml:"tracing"`
	// TracingStrict is svc.event.middleware.tracing_strict: incoming trace ids are kept aside and
	// a fresh one is used.
	TracingStrict bool `toml:"tracing_strict"`
	// Metrics is svc.event.middleware.metrics: publish and consume observations.
	Metrics bool `toml:"metrics"`
	// Recover is svc.event.middleware.recover: a handler panic becomes an error.
	Recover bool `toml:"recover"`
	// Inbox is svc.event.middleware.inbox: deduplicate at-least-once deliveries through
	// sys_event_inbox.
	Inbox bool `toml:"inbox"`
}

// Inbox is svc.event.inbox.
type Inbox struct {
	// Retention is svc.event.inbox.retention (default 168h): completed rows older than this are
	// removed. With middleware.inbox and the outbox both on, it must exceed the outbox retry
	// horizon (ErrInboxRetentionTooShort).
	Retention time.Duration `toml:"retention"`
	// ProcessingLease is svc.event.inbox.processing_lease (default 10m): how long one delivery
	// holds an event.
	ProcessingLease time.Duration `toml:"processing_lease"`
	// CleanupInterval is svc.event.inbox.cleanup_interval (default 1h).
	CleanupInterval time.Duration `toml:"cleanup_interval"`
}

// EventRoute is one svc.event.routing entry.
type EventRoute struct {
	// Pattern is svc.event.routing[].pattern: a path.Match pattern over the event type ("*",
	// "?", "[abc]").
	Pattern string `toml:"pattern"`
	// Transports is svc.event.routing[].transports: the transports a matching event fans out to.
	Transports []string `toml:"transports"`
	// Local marks a rule the composition root put ahead of the operator's (event.WithLocalRoutes),
	// never read from configuration: errors name the operator's rules by their index in
	// svc.event.routing, which local rules do not shift.
	Local bool `toml:"-"`
}

func (e *Event) applyDefaults() {
	e.DefaultTransport = orDefault(e.DefaultTransport, TransportMemory)
	e.AsyncQueueSize = positive(e.AsyncQueueSize, defaultAsyncQueueSize)
	e.AsyncWorkers = positive(e.AsyncWorkers, defaultAsyncWorkers)
	e.PublishTimeout = positive(e.PublishTimeout, defaultPublishTimeout)

	t := &e.Transports
	t.Memory.QueueSize = positive(t.Memory.QueueSize, defaultMemoryQueueSize)
	t.Memory.FullPolicy = orDefault(t.Memory.FullPolicy, FullPolicyError)
	t.Memory.PublishTimeout = positive(t.Memory.PublishTimeout, 0)
	t.TxMemory.QueueSize = positive(t.TxMemory.QueueSize, defaultMemoryQueueSize)
	t.TxMemory.FullPolicy = orDefault(t.TxMemory.FullPolicy, FullPolicyError)
	t.TxMemory.PublishTimeout = positive(t.TxMemory.PublishTimeout, 0)

	o := &t.Outbox
	o.RelayInterval = positive(o.RelayInterval, defaultRelayInterval)
	o.MaxRetries = positive(o.MaxRetries, defaultOutboxMaxRetries)
	o.BatchSize = positive(o.BatchSize, defaultOutboxBatchSize)
	o.LeaseMultiplier = positive(o.LeaseMultiplier, defaultLeaseMultiplier)
	o.MinLease = positive(o.MinLease, defaultMinLease)
	o.Sink = orDefault(o.Sink, TransportMemory)
	o.CleanupInterval = positive(o.CleanupInterval, defaultOutboxCleanupInterval)
	o.CompletedTTL = positive(o.CompletedTTL, defaultCompletedTTL)

	k := &t.KVStoreStream
	k.StreamPrefix = orDefault(k.StreamPrefix, defaultStreamPrefix)
	k.MaxLenApprox = positive(k.MaxLenApprox, 0)
	k.BlockTimeout = positive(k.BlockTimeout, defaultBlockTimeout)
	k.ClaimIdle = positive(k.ClaimIdle, defaultClaimIdle)
	k.ClaimInterval = positive(k.ClaimInterval, defaultClaimInterval)
	k.ClaimBatchSize = positive(k.ClaimBatchSize, defaultClaimBatchSize)
	k.ReaperConcurrency = positive(k.ReaperConcurrency, defaultReaperConcurrency)
	k.HandlerTimeout = positive(k.HandlerTimeout, defaultHandlerTimeout)
	k.SetupTimeout = positive(k.SetupTimeout, defaultSetupTimeout)
	k.ConsumerID = orDefault(k.ConsumerID, defaultConsumerID)
	k.StartID = orDefault(k.StartID, defaultStartID)
	k.IdleGroupRetention = positive(k.IdleGroupRetention, 0)
	k.IdleGroupSweepInterval = positive(k.IdleGroupSweepInterval, defaultIdleGroupSweepInterval)

	e.Inbox.Retention = positive(e.Inbox.Retention, defaultInboxRetention)
	e.Inbox.ProcessingLease = positive(e.Inbox.ProcessingLease, defaultInboxProcessingLease)
	e.Inbox.CleanupInterval = positive(e.Inbox.CleanupInterval, defaultInboxCleanupInterval)
}

// OutboxRetryHorizon is the worst-case time the outbox relay keeps retrying one event (spec
// §6.1): after its k-th failure (k = 1…n) the relay waits 2^k seconds, so the horizon is
// Σ_{k=1..n} 2^k s = (2^(n+1) − 2) s, with n = maxRetries and maxRetries ≤ 0 treated as 10
// (2046 s). The sum saturates at the largest time.Duration instead of overflowing, so a huge
// retry budget fails closed: no inbox retention can exceed a saturated horizon.
func OutboxRetryHorizon(maxRetries int) time.Duration {
	n := positive(maxRetries, defaultOutboxMaxRetries)
	const maxDuration = time.Duration(math.MaxInt64)
	var total time.Duration
	step := time.Second
	for k := 1; k <= n; k++ {
		if step > maxDuration/2 {
			return maxDuration
		}
		step *= 2 // 2^k seconds
		if total > maxDuration-step {
			return maxDuration
		}
		total += step
	}
	return total
}

// validate checks full policies, that every transport named is known and available, the routing
// rules, and the inbox retention rule of §6.1.
func (e *Event) validate(kvEnabled bool) []error {
	var errs []error
	t := &e.Transports
	available := map[string]bool{
		TransportMemory:        true,
		TransportTxMemory:      t.TxMemory.Enabled,
		TransportOutbox:        t.Outbox.Enabled,
		TransportKVStoreStream: t.KVStoreStream.Enabled && kvEnabled,
	}
	// usable explains why name cannot be used, or returns "".
	usable := func(name string) string {
		switch on, known := available[name]; {
		case !known:
			return "unknown transport"
		case !on:
			return "transport not enabled"
		}
		return ""
	}
	for _, f := range []struct {
		key string
		p   FullPolicy
	}{
		{"svc.event.transports.memory.full_policy", t.Memory.FullPolicy},
		{"svc.event.transports.tx_memory.full_policy", t.TxMemory.FullPolicy},
	} {
		switch f.p {
		case "", FullPolicyError, FullPolicyBlock, FullPolicyDropOldest:
		default:
			errs = append(errs, fmt.Errorf("%s %q: want error, block or drop_oldest: %w", f.key, f.p, ErrInvalidEventTransport))
		}
	}
	if t.KVStoreStream.Enabled && !kvEnabled {
		errs = append(errs, fmt.Errorf("svc.event.transports.kvstore_stream.enabled: needs svc.kvstore.enabled: %w", ErrInvalidEventTransport))
	}
	if why := usable(orDefault(e.DefaultTransport, TransportMemory)); why != "" {
		errs = append(errs, fmt.Errorf("svc.event.default_transport %q: %s: %w", e.DefaultTransport, why, ErrInvalidEventTransport))
	}
	if t.Outbox.Enabled {
		sink := orDefault(t.Outbox.Sink, TransportMemory)
		if why := usable(sink); why != "" || sink == TransportOutbox {
			errs = append(errs, fmt.Errorf("svc.event.transports.outbox.sink %q: %s: %w", sink, orDefault(why, "the outbox cannot relay to itself"), ErrInvalidEventTransport))
		}
	}
	for i, r := range e.Routing {
		key := fmt.Sprintf("svc.event.routing[%d]", i)
		if _, err := path.Match(r.Pattern, ""); err != nil || r.Pattern == "" {
			errs = append(errs, fmt.Errorf("%s.pattern %q: malformed: %w", key, r.Pattern, ErrInvalidEventRoute))
		}
		if len(r.Transports) == 0 {
			errs = append(errs, fmt.Errorf("%s.transports: empty: %w", key, ErrInvalidEventRoute))
		}
		for _, name := range r.Transports {
			if why := usable(name); why != "" {
				errs = append(errs, fmt.Errorf("%s.transports %q: %s: %w", key, name, why, ErrInvalidEventRoute))
			}
		}
	}
	if e.Middleware.Inbox && t.Outbox.Enabled {
		horizon := OutboxRetryHorizon(t.Outbox.MaxRetries)
		retention := positive(e.Inbox.Retention, defaultInboxRetention)
		if retention <= horizon {
			errs = append(errs, fmt.Errorf("svc.event.inbox.retention %s: must exceed the outbox retry horizon %s of max_retries %d: %w",
				retention, horizon, positive(t.Outbox.MaxRetries, defaultOutboxMaxRetries), ErrInboxRetentionTooShort))
		}
	}
	return errs
}
