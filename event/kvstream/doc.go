// Package kvstream is the kvstore_stream transport of the event bus (wire-runtime §2.3, §2.6;
// svc.event.transports.kvstore_stream): Redis Streams with consumer groups, durable, ordered,
// at-least-once. A publish XADDs one frame (the envelope as JSON, ≤ event.MaxBodyBytes) to
// stream_prefix + type, trimmed to about max_len_approx; each subscription reads its stream in
// its group (created at start_id) as this process's consumer, up to 32 entries per XREADGROUP,
// and acknowledges a batch's successes in one XACK. Poison entries are acknowledged and logged;
// a failed entry stays pending.
//
// The readers, per subscription × concurrency with each handler under handler_timeout, run from
// Start to Stop.
//
// # Workers (Transport.Workers, run by the server's app.Workers)
//
//   - reaper (claim_interval): XAUTOCLAIM of entries idle longer than claim_idle — of dead
//     consumers and, beyond the original, failed entries of live ones — redelivered here;
//   - group_sweep (idle_group_sweep_interval, when idle_group_retention > 0): destroys idle
//     orphaned groups.
//
// InspectStreams (event.StreamInspector) serves sys/monitor get_event_streams through
// event.Bus.InspectStreams. New is the transport's event.Factory, which package svc passes in
// event.Deps.Transports under "kvstore_stream". Its tests run on the real Redis and call Reap
// and SweepIdleGroups by hand.
package kvstream
