package rpc

import (
	"context"
	"net/http"
	"time"
)

// Observer watches the /api calls served over HTTP, for metrics and traces (issue #19; the ops
// package implements it with Prometheus and OpenTelemetry). EngineConfig.Observer nil means
// nothing is observed, and the request path does no work for it beyond one nil check per step.
//
// Per-call methods run on the hot path: implementations must not allocate or lock beyond atomic
// updates when they can avoid it, which is why the per-operation state is created once by
// Operation and kept on the route. In-process calls (Engine.Call) are not observed: their caller
// is already inside an observed request or worker.
type Observer interface {
	// Operation is called once per registered operation when the engine freezes, and once with
	// empty names for the calls that resolve to no operation (bad envelope, 404, 405). The value
	// returned is called for every call of that operation; it must not be nil.
	Operation(resource, action, version string) OperationObserver
	// Begin is called when a call arrives, before its body is read. The context it returns
	// replaces the request's (a tracer puts its span there); it may set response headers.
	Begin(ctx context.Context, w http.ResponseWriter, r *http.Request) context.Context
}

// OperationObserver observes the calls of one operation (see Observer.Operation).
type OperationObserver interface {
	// Resolved is called when a call resolved to this operation (step 3), before it is
	// authenticated. It is not called for the calls of the unresolved observer.
	Resolved(ctx context.Context)
	// Done is called once the answer was written, with its outcome.
	Done(ctx context.Context, o Outcome)
}

// Outcome is the result of one observed call.
type Outcome struct {
	// Status is the HTTP status written, Code the business code of the envelope.
	Status, Code int
	// Principal is the authenticated caller, nil when authentication did not succeed.
	Principal *Principal
	// Elapsed is the time from Begin to Done (monotonic clock, not the engine's Clock: a fake
	// clock in tests must not turn latencies negative).
	Elapsed time.Duration
	// Resolved reports whether the call reached Resolved (in-flight accounting).
	Resolved bool
}

// observeBegin starts observing q when an Observer is configured.
func (e *Engine) observeBegin(q *request) {
	q.observed = time.Now()
	q.ctx = e.obs.Begin(q.ctx, q.w, q.r)
}

// observeResolved tells the route's observer that q resolved to it.
func (e *Engine) observeResolved(q *request) {
	if e.obs != nil {
		q.route.obs.Resolved(q.ctx)
	}
}

// observeDone reports q's outcome to its route's observer, or to the unresolved observer.
func (e *Engine) observeDone(q *request) {
	o := e.unresolved
	if q.route != nil {
		o = q.route.obs
	}
	o.Done(q.ctx, Outcome{Status: q.status, Code: q.code, Principal: q.principal,
		Elapsed: time.Since(q.observed), Resolved: q.route != nil})
}

// attachObservers gives every route its observer; it runs once, while the engine freezes.
func (e *Engine) attachObservers() {
	if e.obs == nil {
		return
	}
	e.unresolved = e.obs.Operation("", "", "")
	for _, rt := range e.routes {
		rt.obs = e.obs.Operation(rt.resource, rt.action, rt.version)
	}
}
