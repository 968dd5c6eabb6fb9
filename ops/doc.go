// Package ops is the operations module (issue #19): Prometheus metrics, OpenTelemetry traces
// and net/http/pprof for the people who run svc. Everything is off by default.
//
// Routes (on the admin listener svc.admin.address only, never on the public port):
//   - GET svc.metrics.path (default /metrics): the Prometheus exposition, with svc.metrics.enabled;
//   - /debug/pprof/…: net/http/pprof, with svc.pprof.enabled.
//
// Config keys: svc.admin.address, svc.metrics.enabled, svc.metrics.path, svc.pprof.enabled,
// svc.tracing.enabled, svc.tracing.endpoint, svc.tracing.insecure, svc.tracing.sample_ratio,
// svc.tracing.service_name. No resources, tables, migrations or workers.
//
// What it provides to the composition root (package svc), which wires it:
//   - Telemetry.Observer: the rpc.Observer of the /api engine — per-operation request counts by
//     code and status, a latency histogram, in-flight and rate-limited counts, and a server span
//     per call continuing the caller's W3C traceparent. Nil when metrics and tracing are off, so
//     the engine does no observing work;
//   - Telemetry.Registerer: app.Platform.Metrics, where every module registers its own series
//     (each module's metrics.go; read at scrape time with app.NewCollector where the module
//     already keeps the value). Nil with metrics off, so a module registers and counts nothing;
//   - BusCollector and OutboxCollector: collectors that read at scrape time what the bus
//     already keeps (event.Metrics, outbox rows) instead of inline instrumentation;
//   - DBHook and RedisHook: child spans of database queries and Redis commands;
//   - Transport: an http.RoundTripper for outbound calls (the integration module's, through
//     integration.Options.WrapTransport) that makes a client span and sends the traceparent;
//   - Telemetry.TracerProvider: also given to the event bus (event.Deps.Tracer) for its publish
//     and consume spans;
//   - Telemetry.Module: starts the admin listener, stops it and flushes queued spans.
//
// Spec-compatibility choices: the original framework has no metrics endpoint; the spec's event
// bus middleware switches metrics and tracing (§6.1) report here. Label values are bounded by
// code (operation table, declared error codes, event types, job names), never by data; the
// login type is not a label because it comes from the request. docs/operations.md lists every
// metric, the traces and the alert suggestions.
package ops
