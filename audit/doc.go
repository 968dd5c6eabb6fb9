// Package audit is svc's persisted audit trail (ours, issue #47 part 2): every call of an /api
// operation declared with rpc.Audit() and every security event (login, failed login, lockout,
// logout, revocation, refresh-token reuse, trust login) becomes one row of sys_audit_record,
// written asynchronously in batches by the node that saw it, kept for a retention window, and
// read back through sys/audit and the console's Audit page.
//
// # What a record holds
//
// Who (user id and name; for a failed login the identifier as typed), what (resource, action,
// version; the params, meta and result of the call, redacted and bounded exactly as
// rpc.AuditRecord is for the bus: credential-like keys replaced, 8 KiB per value), when
// (at_unix_ms, the call's start), from where (client IP, user agent, request id), the outcome
// (business code, HTTP status, ok) and the duration. Security events are kind "security",
// resource SecurityResource ("security/event"), action the event's short name
// ("login_failed"); their detail holds the login type, reason word, session hash or app id,
// never a secret. Password and role changes are the audited operations security/user
// reset_password and set_roles, so they are in the trail as calls; the CLI's `svc user`
// commands do not pass through /api and are not recorded. Token refreshes are left out (wiring
// in the composition root, securityAuditSink).
//
// # Cost and failure (the request never waits for the trail)
//
// Sink (the /api engine's rpc.AuditSink) and Record only copy the record into a bounded queue
// (svc.audit.queue_size) with a non-blocking send; JSON encoding and the INSERT happen on the
// audit-writer worker. A record that finds the queue full is dropped; a batch whose INSERT
// fails (store down, table dropped, database closed) is dropped; both are counted in
// svc_audit_records_dropped_total{reason="queue_full"|"store_error"} and logged at WARN at
// most once a minute with the number dropped since the last line. No retry: a failing store
// is not hammered and memory stays bounded. The writer takes the first queued record, gathers
// more for up to svc.audit.flush_interval (250 ms) or until svc.audit.batch_size, and writes
// them with one INSERT in one transaction (db.InTx, so on SQLite it queues on the process's
// writer lock), bounded by 10 s: under load the trail costs the database one transaction per
// batch rather than one per call (bench/audit measured the difference). At shutdown the module stops after every
// module that feeds it and Stop (Flush) writes what is still queued. With the trail off, Sink
// is nil (rpc.AuditSinks skips it), Record does nothing, and nothing is queued.
//
// # Several nodes
//
// Every node writes its own records to the shared table with its node_id (Options.NodeID,
// default "<hostname>-<random>"); ids are UUIDv7, so nodes never collide, and no node reads
// another's queue. Each node's sweep deletes by age only, so sweeps on several nodes are
// idempotent.
//
// # Resources
//
// sys/audit (permission sys.audit.query; no operations while svc.audit.enabled is false):
//   - find_page: Search params — user and users (each matches the user id or the user name,
//     exactly: a call records the display name, a failed login the identifier), kind, resource, action,
//     nodeId, requestId (exact), result "ok" | "failed", code (exact), fromUnixMs / toUnixMs
//     (inclusive); meta {page, size} (size default 15, max 1000) as every find_page; answer
//     {page, size, total, items}, newest first. Items are Record.
//   - get: {id} → Record; unknown id 2001.
//   - stats: the Search filters plus bucketMs → {fromUnixMs, toUnixMs, bucketMs, buckets:
//     [{startUnixMs, calls, failures}]}; the range defaults to the last 24 hours, the width to
//     the range cut in 48 (at least 1 s, at most 500 buckets); empty buckets are absent.
//
// The operations of sys/audit are not themselves audited: reading the trail changes nothing,
// and an audited read would add a record for every page the console shows (the trail would
// mostly record people looking at it).
//
// # Routes, tables, workers, config, metrics
//
// Routes: none. Tables: sys_audit_record (migrations/{sqlite,postgres,mysql}/001_init.sql;
// indexes on at, user_id+at, user_name+at, resource+action+at, ok+at, code+at). Workers (only
// while enabled): audit-writer (a loop) and audit-sweep (every svc.audit.sweep_interval:
// DELETE rows older than svc.audit.retention). Config: svc.audit.enabled (default false; the
// shipped configs/application.toml sets true), auto_migrate, retention (90 days), queue_size
// (4096), batch_size (128), flush_interval (250ms), sweep_interval (1h) — docs/configuration.md. Metrics:
// svc_audit_records_written_total, svc_audit_records_dropped_total{reason}.
//
// # Spec
//
// Beyond the spec: the spec and the wire facts know only the in-memory audit event
// (wire-runtime §2.9, svc.api.request.audit), which is still published on the bus either way.
package audit
