// Package kvstream is the kvstore_stream transport of the event bus (wire-runtime §2.3, §2.6;
// svc.event.transports.kvstore_stream): Redis Streams with consumer groups, durable, ordered,
// at-least-once. A publish XADDs one frame (the envelope as JSON, ≤ event.MaxBodyBytes) to
// stream_prefix + type, trimmed to about max_len_approx; each subscription reads its stream in
// its group (created at start_id) as this process's consumer, up to 32 entries per XREADGROUP,
// and acknowledges a batch's successes in one XACK. Poison entries are acknowledged and logged;
// a failed entry stays pending.
//
// # Workers (started by Start unless event.Deps.ManualWorkers, ended by Stop)
//
//   - readers: per subscription × concurrency, each handler under handler_timeout;
//   - reaper (claim_interval): XAUTOCLAIM of entries idle longer than claim_idle — of dead
//     consumers and, beyond the original, failed entries of live ones — redelivered here;
//   - idle-group sweeper (idle_group_sweep_interval, when idle_group_retention > 0).
//
// InspectStreams (event.StreamInspector) serves sys/monitor get_event_streams through
// event.Bus.InspectStreams. Importing the package registers "kvstore_stream" with
// event.RegisterTransport. Its tests run on the real Redis.
package kvstream
