// Package eventbench measures the event bus (issue #15) with go test -bench:
//
//   - BenchmarkMemory: memory transport, publish → handler, one subscription (target
//     ≥ 1 000 000 events/s);
//   - BenchmarkOutboxPostgres: one event per transaction from 16 publishers on PostgreSQL,
//     committed and relayed to a memory subscriber, with the publish → handler latency p50/p99 on
//     the publishing node (targets ≥ 5 000 events/s, p50 ≤ 50 ms); BenchmarkOutboxMySQL and
//     BenchmarkOutboxSQLite the same on MariaDB and SQLite (for information);
//     BenchmarkOutboxPostgresBatch10 a PublishBatch figure (ten events per transaction, not the
//     target's shape); BenchmarkPostgresCommitCeiling the rate at which the same 16 goroutines
//     commit one outbox row per transaction with no bus at all — the bound of the outbox figure
//     on the machine at hand; BenchmarkOutboxRelayDrainPostgres the relay alone, draining rows
//     written before the clock starts;
//   - BenchmarkStream: kvstore_stream on Redis through one consumer group (target ≥ 20 000
//     events/s).
//
// Run from the repository root, after eval "$(scripts/services.sh)":
//
//	go test -run '^$' -bench . -benchtime 2s ./bench/event/
//
// On a shared machine the PostgreSQL figures follow the disk's fsync latency and the other
// jobs' load; bench/event/ratio.sh runs the outbox and the ceiling alternately and prints the
// medians and their ratio.
//
// Recorded on the idle 2-core machine (2026-11-24, load average 0.9-2.3, -benchtime 2s):
// memory 1.90-1.99 M events/s; kvstore_stream 32 867-34 960 events/s; outbox on PostgreSQL
// 6 036-6 317 events/s at p50 11.9-16.9 ms against a commit ceiling of 8 144-9 105/s
// (ratio.sh, ROUNDS=3). docs/events.md has the loaded figures beside them.
//
// The Watermill comparison lives in bench/event/watermill, a module of its own so Watermill never
// becomes a dependency of svc.
package eventbench
