package ops

import (
	"context"
	"net/http"

	"github.com/svc-framework/svc/rpc"
)

// apiObserver is the rpc.Observer of Telemetry: metrics, tracing or both, whichever is on.
type apiObserver struct {
	metrics *apiMetrics // nil with metrics off
	tracing *apiTracing // nil with tracing off
}

var _ rpc.Observer = (*apiObserver)(nil)

// Operation implements rpc.Observer.
func (a *apiObserver) Operation(resource, action, version string) rpc.OperationObserver {
	o := &opObserver{}
	if a.metrics != nil {
		o.metrics = a.metrics.operation(resource, action, version)
	}
	if a.tracing != nil {
		o.tracing = newOpTracing(resource, action, version)
	}
	return o
}

// Begin implements rpc.Observer.
func (a *apiObserver) Begin(ctx context.Context, w http.ResponseWriter, r *http.Request) context.Context {
	if a.tracing == nil {
		return ctx
	}
	return a.tracing.begin(ctx, w, r)
}

// opObserver observes one operation.
type opObserver struct {
	metrics *opMetrics
	tracing *opTracing
}

// Resolved implements rpc.OperationObserver.
func (o *opObserver) Resolved(ctx context.Context) {
	if o.metrics != nil {
		o.metrics.resolved()
	}
	if o.tracing != nil {
		o.tracing.resolved(ctx)
	}
}

// Done implements rpc.OperationObserver.
func (o *opObserver) Done(ctx context.Context, out rpc.Outcome) {
	if o.metrics != nil {
		o.metrics.done(out)
	}
	if o.tracing != nil {
		o.tracing.done(ctx, out)
	}
}
