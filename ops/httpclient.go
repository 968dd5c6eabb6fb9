package ops

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Span attribute keys of outbound HTTP spans.
const (
	AttrHTTPMethod    = attribute.Key("http.request.method")
	AttrServerAddress = attribute.Key("server.address")
)

// Transport wraps base (nil: http.DefaultTransport) so that every request made inside a
// recording span gets a client span "HTTP <method>" and carries its W3C traceparent, for
// outbound calls such as the integration module's. With tp nil (tracing off) it returns base
// unchanged. Only the method, the host and the status are recorded: paths and queries may hold
// tokens.
func Transport(tp trace.TracerProvider, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if tp == nil {
		return base
	}
	return &tracingTransport{base: base, tracer: tp.Tracer(TracerName)}
}

type tracingTransport struct {
	base   http.RoundTripper
	tracer trace.Tracer
}

// RoundTrip implements http.RoundTripper.
func (t *tracingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	if !trace.SpanFromContext(ctx).IsRecording() {
		return t.base.RoundTrip(r)
	}
	ctx, span := t.tracer.Start(ctx, "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(AttrHTTPMethod.String(r.Method), AttrServerAddress.String(r.URL.Hostname())))
	defer span.End()
	r = r.Clone(ctx) // a RoundTripper must not modify the caller's request
	propagator.Inject(ctx, propagation.HeaderCarrier(r.Header))
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "request failed")
		return nil, err
	}
	span.SetAttributes(AttrStatus.Int(resp.StatusCode))
	if resp.StatusCode >= http.StatusInternalServerError {
		span.SetStatus(codes.Error, resp.Status)
	}
	return resp, nil
}
