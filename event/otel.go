package event

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the bus's spans.
const tracerName = "github.com/svc-framework/svc/event"

// attrEventType is the span attribute naming the event type.
const attrEventType = attribute.Key("svc.event.type")

// startPublishSpan starts the producer span of a publish when Deps.Tracer is set and ctx is in
// a recording span (an /api call, a traced handler); otherwise it returns ctx and a no-op end.
// The envelope's trace ids are then stamped from this span, so the consumer continues it.
func (b *Bus) startPublishSpan(ctx context.Context, typ string) (context.Context, func(error)) {
	if b.tracer == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, noEnd
	}
	ctx, span := b.tracer.Start(ctx, "publish "+typ, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attrEventType.String(typ)))
	return ctx, func(err error) { endSpan(span, err) }
}

func noEnd(error) {}

func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "failed")
	}
	span.End()
}

// otelTrace returns the trace and span ids of the OpenTelemetry span in ctx, if any.
func otelTrace(ctx context.Context) (traceID, spanID string, ok bool) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return "", "", false
	}
	return sc.TraceID().String(), sc.SpanID().String(), true
}

// startConsumeSpan puts the delivery's trace in ctx as the remote parent and, when Deps.Tracer
// is set, starts the consumer span of the handler, so its database and Redis calls and the
// events it publishes join the publisher's trace.
func (b *Bus) startConsumeSpan(ctx context.Context, env *Envelope, tr Trace) (context.Context, func(error)) {
	if b.tracer == nil {
		return ctx, noEnd
	}
	tid, err1 := trace.TraceIDFromHex(tr.TraceID)
	sid, err2 := trace.SpanIDFromHex(env.SpanID)
	if err1 == nil && err2 == nil && tr.IncomingTraceID == "" {
		ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true}))
	}
	ctx, span := b.tracer.Start(ctx, "consume "+env.Type, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attrEventType.String(env.Type)))
	return ctx, func(err error) { endSpan(span, err) }
}
