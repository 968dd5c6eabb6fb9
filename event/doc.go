// Package event is the event bus of svc.event (spec §6.1, §7; wire-runtime §2): publish and
// subscribe through routing rules over four transports, with middleware, a transactional outbox
// and a consumer inbox. docs/events.md is the user guide.
//
// # API
//
// New(cfg, Deps) builds a *Bus (no I/O); Start and Stop run it. *Bus implements PubSub
// (Publisher + Subscriber), the interfaces modules depend on: Publish, PublishBatch, Subscribe,
// and SubscribeTyped for a decoded payload. RunInTx, NewTxScope and InTx publish inside a
// caller's transaction; RequireTransactional lets a module assert its events commit with its
// data; InspectStreams serves sys/monitor get_event_streams; Metrics exposes counters and
// OutboxCounts the outbox rows per status (both read by the ops module's collectors at scrape
// time); Migrations returns the tables' migrations for db.Migrate. For the operator's resources
// (admin.go): Transports, Routes and Config report what the bus runs, FindOutbox and
// OutboxRowByID read sys_event_outbox, and ReplayDeadLetter and DiscardDeadLetter act on a dead
// row through the outbox transport's DeadLetterAdmin.
//
// # OpenTelemetry
//
// With middleware.tracing, an OpenTelemetry span in the publishing context is the envelope's
// trace (its ids go into traceparent). With Deps.Tracer set (svc.tracing on), Publish makes a
// producer span "publish <type>" inside a recording span, and the tracing middleware a consumer
// span "consume <type>" whose parent is the envelope's span, so a handler's database and Redis
// spans join the publisher's trace. Without Deps.Tracer no span is made.
//
// # In the server
//
// Package svc builds one bus per server from its svc.event, to which svc.New added, with
// WithTransactionalRoutes, a transactional route for each pattern the modules declare
// (storage.EventPattern, approval.EventPattern) that no rule covers, and the four transport
// factories, as the first
// module of the boot chain: its migrations run with the modules' (at startup when the outbox or
// inbox is on, always under svc migrate), it starts before and stops after every other module,
// its Workers are the module's workers (run by app.Workers like every module's: panic recovery,
// logging, stopped before any module stops), and modules get it as app.Platform.Events. Storage
// publishes with InTx inside its transactions; security and the /api audit record (through
// package svc's audit sink: rpc imports no bus) publish with Async; sys/monitor
// get_event_streams reads InspectStreams.
// docs/events.md lists every event of the modules.
//
// # Resources (mounted by package svc, eventapi.go: rpc imports no bus)
//
//	sys/event         get_overview  sys.event.query   transports (enabled, capabilities, settings),
//	                                                  routes, outbox {enabled, sink, maxRetries, counts}
//	                  get_streams   sys.event.query   InspectStreams (consumer groups: pending, lag)
//	sys/event/outbox  find_page     sys.event.query   {status?, eventType? (prefix), eventId?} + meta
//	                  get           sys.event.query   {id} → the row with headers and payload
//	                  replay        sys.event.manage  audited: {id} → {outcome, row}
//	                  discard       sys.event.manage  audited: {id} → {discarded}
//
// docs/events.md ("Operating the bus from /api") has the wire shapes. get returns any row's
// payload, whoever's event it is (approval events carry every user's form data): holders of
// sys.event.query read all of it, which docs/events.md and docs/console.md say.
//
// # Packages and the transport SPI
//
// This package is the bus: the API above, the envelope, routing, middleware, the inbox, the
// event tables' migrations (sys_event_outbox and sys_event_inbox, one migration set since
// existing databases record it under "event") and the transport SPI of transport.go: a
// Transport (Capabilities, Publish, Subscribe, Unsubscribe, Start, Stop, Workers), a TxTransport
// (PublishTx), the optional Deliverer (run handlers in the caller, for the outbox's in-process
// sink) and StreamInspector (get_event_streams), the Host a Factory receives (config, DB, Redis,
// logger, clock, id source, Metrics with its Count* hooks, Lookup of another transport) and the
// Worker spec. The transports are subpackages, as shared/ARCHITECTURE.md plans:
//
//   - event/memory: memory and tx_memory;
//   - event/outbox: the outbox, its relay, PostgreSQL LISTEN/NOTIFY wake-ups and cleanup;
//   - event/kvstream: kvstore_stream (Redis Streams), its reaper and idle-group sweeper.
//
// They import this package and this package imports none of them; nothing registers itself.
// Whoever calls New passes their factories by name in Deps.Transports (memory.New, memory.NewTx,
// outbox.New, kvstream.New; package svc passes all four), and New builds the transports
// svc.event enables, each once; a factory's Host.Lookup builds the transport it asks for first
// (the outbox's sink). An enabled transport without a factory fails New with
// ErrTransportNotFound naming it. Test helpers the transports' tests share are in
// event/internal/eventtest; package event's own tests get the factories from the external test
// file transports_test.go.
//
// # Config keys
//
// svc.event.default_transport, async_queue_size, async_workers, publish_timeout;
// transports.memory.{queue_size, full_policy, publish_timeout};
// transports.tx_memory.{enabled, queue_size, full_policy, publish_timeout};
// transports.outbox.{enabled, relay_interval, max_retries, batch_size, lease_multiplier,
// min_lease, sink, cleanup_interval, completed_ttl};
// transports.kvstore_stream.{enabled, stream_prefix, max_len_approx, block_timeout, claim_idle,
// claim_interval, claim_batch_size, reaper_concurrency, handler_timeout, setup_timeout,
// consumer_id, start_id, idle_group_retention, idle_group_sweep_interval};
// middleware.{logging, tracing, tracing_strict, metrics, recover, inbox};
// inbox.{retention, processing_lease, cleanup_interval}; routing[].{pattern, transports}.
// Parsing, defaults and validation are in package config (config/event.go); New repeats the
// inbox retention check (config.ErrInboxRetentionTooShort) and checks transports and rules.
//
// # Tables
//
// sys_event_outbox (statuses pending, processing, completed, failed, dead) and sys_event_inbox
// (processing, completed), per dialect in migrations/{postgres,mysql,sqlite}.
//
// # Workers
//
// The bus runs no background job of its own accord: Bus.Workers lists them as Worker specs
// (the inbox's and each transport's Transport.Workers, named <transport>.<job>) and package svc
// hands them to app.Workers as the event module's workers, which runs them from after every
// module started until before any stops, with panic recovery and logging. A bus built without
// running them (tools, tests) relays and reaps only when the caller calls RelayOnce, Reap or
// Cleanup. The jobs:
//
//   - outbox.relay (event/outbox, a loop): at once, then every relay_interval and when woken by a local commit or, on
//     PostgreSQL, a NOTIFY from another node; claims with FOR UPDATE SKIP LOCKED (PostgreSQL, MySQL/MariaDB)
//     or an immediate transaction (SQLite) and leases; on PostgreSQL the claim is one UPDATE …
//     RETURNING that also completes the previous batch (one round trip and one commit per
//     batch), sent through a session of its own with synchronous_commit off (relaySession: a
//     database crash can make an event be delivered again, never lose one); it claims again
//     while batches come back non-empty; a batch in flight finishes when the worker stops, and
//     the rows still waiting in its hand-over are given back (pending);
//   - outbox.announcer (PostgreSQL, a loop): at most one pg_notify per 10 ms of local commits,
//     outside the publishing transaction (a NOTIFY inside it serialises commits on PostgreSQL's
//     notify lock, and each NOTIFY is a commit of its own); outbox.listener (PostgreSQL, a
//     loop): the LISTEN connection, run again after the runtime's back-off when it fails;
//   - outbox.cleanup (cleanup_interval), inbox.cleanup (inbox.cleanup_interval, this package);
//   - kvstore_stream.reaper (claim_interval), kvstore_stream.group_sweep
//     (idle_group_sweep_interval, when idle_group_retention > 0).
//
// Delivery goroutines are not workers: the async publish workers (async_workers) and the
// transports' subscription handlers (memory queues, stream readers per subscription ×
// concurrency) run from Start to Stop.
//
// # Choices where the original is silent or differs
//
//   - Names use svc.: dead-letter topics svc-dlq.<type>, header svc.dlq, stream prefix svc:.
//   - The prefix "svc." (ReservedPrefix) names the framework's events. The bus does not know who
//     publishes, so it does not refuse it; code that publishes a type a user chose (the cron
//     module's event.publish job) refuses it with Reserved, in any letter case ("SVC.x" and
//     "Svc.x" too), so such a user cannot forge a framework event or a look-alike of one.
//   - Subscribe takes an exact event type (a stream key is prefix + type), not a pattern.
//   - A rule listing the outbox and its sink publishes only to the outbox; the sink gets the
//     event from the relay, so it is not delivered twice. A subscription on a rule that lists the
//     outbox without its sink fails (ErrSinkMissing, naming the rule).
//   - With an in-process sink the relay runs the handlers and completes a row only when they
//     succeeded (at-least-once end to end); the original hands the event to a queue.
//   - A row published with a TxScope on a node whose relay runs is inserted already claimed by
//     that relay (processing, retry_after its lease: wire-runtime §2.4 step 1 fused with the
//     insert) and forwarded after the commit without a claim; the original inserts it pending.
//     The state machine and the takeover of an expired lease are unchanged.
//   - The stream reaper uses XAUTOCLAIM and also retries failed entries of live consumers.
//   - Stream readers take up to 32 entries per XREADGROUP (the original: 1) and acknowledge a
//     batch's successes in one XACK.
//   - tx_memory's delivery after commit needs a TxScope in the context (RunInTx or NewTxScope),
//     because a bun transaction has no commit hooks (ErrTxScopeRequired).
//   - RunInTx's scope batches (TxScope.Batch): the outbox rows of the transaction's publishes are
//     written by one INSERT at TxScope.Flush, before the commit; an owner may defer writes of
//     its own to the same flush (TxScope.Defer), which on PostgreSQL is one round trip.
//   - The 1 MiB body limit applies where a body is produced (outbox, stream); memory transports
//     pass the value without encoding it. Header limits apply everywhere.
//   - Relayed envelopes carry the outbox row's created_at as PublishedAt.
//   - The original has no operations on the bus; sys/event and sys/event/outbox are svc's
//     (issue #36). Replaying a dead letter is svc's too: the row is claimed from dead by one
//     conditional UPDATE and forwarded in the request (the relay's step for one row), so the
//     answer says whether it was delivered; the dead letter already sent to svc-dlq.<type> is
//     not withdrawn.
//   - The memory transport shares one *Envelope between its subscribers: handlers must not
//     modify it.
package event
