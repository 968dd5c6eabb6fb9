package ops

import (
	"context"
	"net/http"
	"strconv"

	"github.com/svc-framework/svc/rpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Span attribute keys of the /api span.
const (
	AttrResource      = attribute.Key("svc.api.resource")
	AttrAction        = attribute.Key("svc.api.action")
	AttrVersion       = attribute.Key("svc.api.version")
	AttrCode          = attribute.Key("svc.api.code")
	AttrPrincipalType = attribute.Key("svc.principal.type")
	AttrStatus        = attribute.Key("http.response.status_code")
)

// propagator reads and writes W3C traceparent/tracestate headers.
var propagator = propagation.TraceContext{}

// apiTracing makes the span of each /api call: a server span continuing the caller's
// traceparent, renamed "<resource>/<action>" once the operation is known, and echoed back in the
// response's traceparent header so a client can find its trace.
type apiTracing struct {
	tracer trace.Tracer
}

func (t *apiTracing) begin(ctx context.Context, w http.ResponseWriter, r *http.Request) context.Context {
	ctx = propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	ctx, _ = t.tracer.Start(ctx, "/api", trace.WithSpanKind(trace.SpanKindServer))
	propagator.Inject(ctx, propagation.HeaderCarrier(w.Header()))
	return ctx
}

// opTracing is the per-operation part: the span name and attributes, built once.
type opTracing struct {
	name  string
	attrs []attribute.KeyValue
}

func newOpTracing(resource, action, version string) *opTracing {
	if resource == "" {
		return &opTracing{name: "/api"}
	}
	return &opTracing{name: resource + "/" + action, attrs: []attribute.KeyValue{
		AttrResource.String(resource), AttrAction.String(action), AttrVersion.String(version)}}
}

func (o *opTracing) resolved(ctx context.Context) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetName(o.name)
	span.SetAttributes(o.attrs...)
}

func (o *opTracing) done(ctx context.Context, out rpc.Outcome) {
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		principal := "none" // authentication did not succeed
		switch {
		case out.Principal.IsAnonymous() && out.Principal != nil:
			principal = "anonymous" // a public operation's caller
		case out.Principal != nil:
			principal = string(out.Principal.Type)
		}
		span.SetAttributes(AttrCode.Int(out.Code), AttrStatus.Int(out.Status), AttrPrincipalType.String(principal))
		if out.Status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, "code "+strconv.Itoa(out.Code))
		}
	}
	span.End()
}
