package event

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// chain wraps h in the configured middleware (wire-runtime §2.7), outermost first: recover,
// tracing, logging, metrics, inbox. The inbox applies only to routes with an at-least-once
// transport and a group.
func (b *Bus) chain(h Handler, transportName string, atLeastOnce bool, group string) Handler {
	mw := b.cfg.Middleware
	if atLeastOnce && b.inbox != nil && group != "" {
		h = b.inboxMiddleware(h, group)
	}
	if mw.Metrics {
		h = b.metricsMiddleware(h)
	}
	if mw.Logging {
		h = b.loggingMiddleware(h, transportName, group)
	}
	if mw.Tracing {
		h = b.tracingMiddleware(h)
	}
	if mw.Recover {
		h = recoverMiddleware(h)
	}
	return h
}

// recoverMiddleware turns a handler panic into ErrHandlerPanic.
func recoverMiddleware(h Handler) Handler {
	return func(ctx context.Context, env *Envelope) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: %s %s: %v", ErrHandlerPanic, env.Type, env.ID, r)
			}
		}()
		return h(ctx, env)
	}
}

// loggingMiddleware logs every delivery at debug level and failures at warn level.
func (b *Bus) loggingMiddleware(h Handler, transportName, group string) Handler {
	return func(ctx context.Context, env *Envelope) error {
		start := b.now()
		err := h(ctx, env)
		attrs := []any{"transport", transportName, "type", env.Type, "id", env.ID, "group", group,
			"correlation_id", env.CorrelationID, "elapsed", b.now().Sub(start)}
		if err != nil {
			b.log.Warn("event: handler failed", append(attrs, "err", err)...)
		} else {
			b.log.Debug("event: handled", attrs...)
		}
		return err
	}
}

// metricsMiddleware counts deliveries and failures per type; a panic counts as a failure on its
// way to the recover middleware.
func (b *Bus) metricsMiddleware(h Handler) Handler {
	return func(ctx context.Context, env *Envelope) error {
		defer func() {
			if r := recover(); r != nil {
				b.metrics.consumed(env.Type, ErrHandlerPanic)
				panic(r)
			}
		}()
		err := h(ctx, env)
		b.metrics.consumed(env.Type, err)
		return err
	}
}

// traceKey carries the trace of the delivery being handled, so events published by the handler
// continue it.
type traceKey struct{}

// Trace is the W3C trace context of a delivery.
type Trace struct {
	// TraceID is 32 lowercase hex digits.
	TraceID string
	// SpanID is 16 lowercase hex digits.
	SpanID string
	// IncomingTraceID is the trace id that arrived with the event when tracing_strict replaced
	// it, else "".
	IncomingTraceID string
}

// TraceFrom returns the trace of the delivery ctx belongs to (zero outside handlers or with
// tracing off).
func TraceFrom(ctx context.Context) Trace {
	t, _ := ctx.Value(traceKey{}).(Trace)
	return t
}

// tracingMiddleware puts the event's trace (from the envelope or its traceparent header) in the
// handler's context; with tracing_strict the incoming id is parked and a fresh one used.
func (b *Bus) tracingMiddleware(h Handler) Handler {
	return func(ctx context.Context, env *Envelope) error {
		tr := Trace{TraceID: env.TraceID, SpanID: env.SpanID}
		if tr.TraceID == "" {
			tr.TraceID, tr.SpanID, _ = parseTraceparent(env.Headers[HeaderTraceparent])
		}
		if b.cfg.Middleware.TracingStrict || tr.TraceID == "" {
			tr.IncomingTraceID = tr.TraceID
			tr.TraceID = randomHex(16)
		}
		tr.SpanID = randomHex(8)
		ctx, end := b.startConsumeSpan(ctx, env, tr)
		err := h(context.WithValue(ctx, traceKey{}, tr), env)
		end(err)
		return err
	}
}

// stampTrace sets the trace ids of a new envelope and its traceparent header: an OpenTelemetry
// span in ctx is continued (its span is the parent), else the trace of the delivery being
// handled is continued with a fresh span, otherwise a new trace starts.
func (b *Bus) stampTrace(ctx context.Context, env *Envelope) {
	if tid, sid, ok := otelTrace(ctx); ok {
		// An OpenTelemetry span (the /api call's, the publish span) is the parent: the
		// consumer continues it (issue #19).
		env.TraceID, env.SpanID = tid, sid
		env.Headers = CloneHeaders(env.Headers, HeaderTraceparent, "00-"+tid+"-"+sid+"-01")
		return
	}
	env.TraceID = TraceFrom(ctx).TraceID
	if env.TraceID == "" {
		env.TraceID = randomHex(16)
	}
	env.SpanID = randomHex(8)
	env.Headers = CloneHeaders(env.Headers, HeaderTraceparent, "00-"+env.TraceID+"-"+env.SpanID+"-01")
}

// parseTraceparent splits a version-00 traceparent header into trace and span ids.
func parseTraceparent(v string) (traceID, spanID string, ok bool) {
	parts := strings.Split(v, "-")
	if len(parts) != 4 || parts[0] != "00" || len(parts[1]) != 32 || len(parts[2]) != 16 {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// Metrics are the bus's counters, kept in the package until a metrics exporter reads them.
type Metrics struct {
	dropped        atomic.Int64
	asyncFallbacks atomic.Int64
	relayed        atomic.Int64
	relayFailures  atomic.Int64
	deadLettered   atomic.Int64
	redelivered    atomic.Int64
	types          sync.Map // event type → *typeCounters
}

// typeCounters are the counters of one event type.
type typeCounters struct {
	published, publishErrors, handled, handlerErrors atomic.Int64
}

// TypeCounts is a snapshot of one event type's counters.
type TypeCounts struct {
	// Published counts accepted publishes.
	Published int64
	// PublishErrors counts failed publishes.
	PublishErrors int64
	// Handled counts successful deliveries (metrics middleware).
	Handled int64
	// HandlerErrors counts failed deliveries (metrics middleware).
	HandlerErrors int64
}

// MetricsSnapshot is a copy of every counter.
type MetricsSnapshot struct {
	// Types are the per-type counters.
	Types map[string]TypeCounts
	// Dropped counts events a drop_oldest queue discarded.
	Dropped int64
	// AsyncFallbacks counts async publishes run synchronously because the queue was full.
	AsyncFallbacks int64
	// Relayed counts outbox rows forwarded to the sink.
	Relayed int64
	// RelayFailures counts failed forwards (each makes a row failed, or dead).
	RelayFailures int64
	// DeadLettered counts rows forwarded to svc-dlq.<type>.
	DeadLettered int64
	// Redelivered counts stream entries the reaper claimed and delivered again.
	Redelivered int64
}

// CountDropped adds n events a full queue dropped (memory full_policy drop_oldest).
func (m *Metrics) CountDropped(n int64) { m.dropped.Add(n) }

// CountRelayed adds n events the outbox relay forwarded.
func (m *Metrics) CountRelayed(n int64) { m.relayed.Add(n) }

// CountRelayFailure counts one failed outbox forward.
func (m *Metrics) CountRelayFailure() { m.relayFailures.Add(1) }

// CountDeadLettered counts one event moved to its dead-letter topic.
func (m *Metrics) CountDeadLettered() { m.deadLettered.Add(1) }

// CountRedelivered adds n stream entries the reaper claimed again.
func (m *Metrics) CountRedelivered(n int64) { m.redelivered.Add(n) }

func newMetrics() *Metrics { return &Metrics{} }

func (m *Metrics) counters(eventType string) *typeCounters {
	if c, ok := m.types.Load(eventType); ok {
		return c.(*typeCounters)
	}
	c, _ := m.types.LoadOrStore(eventType, &typeCounters{})
	return c.(*typeCounters)
}

func (m *Metrics) published(t string)     { m.counters(t).published.Add(1) }
func (m *Metrics) publishFailed(t string) { m.counters(t).publishErrors.Add(1) }

func (m *Metrics) consumed(t string, err error) {
	if err != nil {
		m.counters(t).handlerErrors.Add(1)
		return
	}
	m.counters(t).handled.Add(1)
}

// Snapshot copies the counters.
func (m *Metrics) Snapshot() MetricsSnapshot {
	s := MetricsSnapshot{Types: map[string]TypeCounts{}, Dropped: m.dropped.Load(), AsyncFallbacks: m.asyncFallbacks.Load(),
		Relayed: m.relayed.Load(), RelayFailures: m.relayFailures.Load(), DeadLettered: m.deadLettered.Load(),
		Redelivered: m.redelivered.Load()}
	m.types.Range(func(k, v any) bool {
		c := v.(*typeCounters)
		s.Types[k.(string)] = TypeCounts{Published: c.published.Load(), PublishErrors: c.publishErrors.Load(),
			Handled: c.handled.Load(), HandlerErrors: c.handlerErrors.Load()}
		return true
	})
	return s
}
