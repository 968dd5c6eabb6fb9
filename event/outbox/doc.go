// Package outbox is the transactional outbox transport of the event bus (wire-runtime §2.4;
// svc.event.transports.outbox): durable, transactional, at-least-once, publish-only. A publish
// writes a sys_event_outbox row (event.OutboxRow; the table's migrations are package event's)
// through the caller's transaction with event.InTx, or in a statement of its own; the relay
// forwards due rows to the sink transport and completes them.
//
// # Workers (Transport.Workers, run by the server's app.Workers from after every module started
// until before any stops; Start and Stop do nothing)
//
//   - relay (a loop): at once, then every relay_interval and when woken by a local commit or, on PostgreSQL, a NOTIFY
//     from another node; leases batches (FOR UPDATE SKIP LOCKED on PostgreSQL and MySQL/MariaDB,
//     an immediate transaction on SQLite), retries failures after 2^n s (capped at 1 h) with a
//     redacted, truncated last_error, dead-letters to svc-dlq.<type> at max_retries (loop guard:
//     an event carrying the svc.dlq header is refused); an in-process sink runs the handlers
//     before the row completes. Rows of local commits with a scope are handed over: written
//     already leased to this relay (processing, the claim of step 1 fused with the insert),
//     forwarded after the commit without a claim, given back (pending) when the relay stops,
//     and left to any relay's takeover when the node dies first (Transport.PublishTx);
//   - listener and announcer (PostgreSQL, loops): LISTEN on svc_event_outbox[:schema] (after a
//     lost connection the worker runtime runs it again after its back-off), and at most one
//     pg_notify per 10 ms of local commits, outside the publishing transaction;
//   - cleanup: completed rows older than completed_ttl, every cleanup_interval.
//
// Replay and Discard (admin.go) are the transport's event.DeadLetterAdmin, behind sys/event/outbox
// replay and discard: both act only on a dead row (UPDATE or DELETE … WHERE status = 'dead'), so
// two replays, or a replay and a discard, cannot both succeed; a replay forwards and records the
// row as the relay does.
//
// A bus whose workers do not run (a tool, a test) writes pending rows and relays nothing;
// RelayOnce and Cleanup are exported for tests and tools that drive the relay by hand. New is
// the transport's event.Factory, which package svc passes in event.Deps.Transports under
// "outbox"; it looks its sink up among the bus's transports. Its tests run on SQLite, PostgreSQL and MariaDB, with the crash
// tests (a SIGKILLed relay and stream consumer, a rolled-back transaction) and the two-node
// tests; they use the memory and kvstream transports as sinks.
package outbox
