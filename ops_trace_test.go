package svc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/ops"
	"github.com/svc-framework/svc/svctest"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Trace ids of the caller's traceparent in TestTraceOfAPICall.
const (
	callerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID  = "00f067aa0ba902b7"
)

// TestTraceOfAPICall: one /api call that reads the database and publishes an event makes the
// span tree caller → "ops/probe/touch" (server; resource, action, principal type, code) → the
// database query and the publish span → the consumer span → its own database query; the
// response carries the call's traceparent.
func TestTraceOfAPICall(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) { c.Event.Middleware.Tracing = true }),
		svctest.WithOptions(svc.WithModule(probeModule), svc.WithTelemetry(ops.Options{TracerProvider: tp})))

	r := srv.Call(t, "ops/probe", "touch", nil, svctest.WithHeader("traceparent", "00-"+callerTraceID+"-"+callerSpanID+"-01"))
	if r.Code != 0 {
		t.Fatalf("touch: code %d (%s)", r.Code, r.Message)
	}
	svctest.Eventually(t, 10*time.Second, func() bool { return findSpan(exp.GetSpans(), "consume ops.probe.touched") != nil },
		"the consumer span")
	spans := exp.GetSpans()

	api := findSpan(spans, "ops/probe/touch")
	if api == nil {
		t.Fatalf("no span ops/probe/touch among %v", spanNames(spans))
	}
	if got := api.SpanContext.TraceID().String(); got != callerTraceID {
		t.Errorf("api span trace = %s, want the caller's %s", got, callerTraceID)
	}
	if got := api.Parent.SpanID().String(); got != callerSpanID || !api.Parent.IsRemote() {
		t.Errorf("api span parent = %s (remote %v), want the caller's %s", got, api.Parent.IsRemote(), callerSpanID)
	}
	wantAttrs(t, api.Attributes, map[attribute.Key]string{ops.AttrResource: "ops/probe", ops.AttrAction: "touch",
		ops.AttrPrincipalType: "anonymous", ops.AttrCode: "0", ops.AttrStatus: "200"})
	if tp := r.Header.Get("traceparent"); !strings.Contains(tp, callerTraceID+"-"+api.SpanContext.SpanID().String()) {
		t.Errorf("response traceparent = %q, want the api span in trace %s", tp, callerTraceID)
	}

	query := childOf(spans, api, "db SELECT")
	publish := childOf(spans, api, "publish ops.probe.touched")
	if query == nil || publish == nil {
		t.Fatalf("children of the api span: query %v, publish %v; spans %v", query != nil, publish != nil, spanNames(spans))
	}
	wantAttrs(t, query.Attributes, map[attribute.Key]string{ops.AttrDBSystem: "sqlite", ops.AttrDBOperation: "SELECT"})
	consume := childOf(spans, publish, "consume ops.probe.touched")
	if consume == nil {
		t.Fatalf("no consumer span under the publish span; spans %v", spanNames(spans))
	}
	if childOf(spans, consume, "db SELECT") == nil {
		t.Errorf("no database span under the consumer span; spans %v", spanNames(spans))
	}
}

// findSpan returns the first span named name.
func findSpan(spans tracetest.SpanStubs, name string) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

// childOf returns the span named name whose parent is parent.
func childOf(spans tracetest.SpanStubs, parent *tracetest.SpanStub, name string) *tracetest.SpanStub {
	for i := range spans {
		s := &spans[i]
		if s.Name == name && s.Parent.SpanID() == parent.SpanContext.SpanID() && s.SpanContext.TraceID() == parent.SpanContext.TraceID() {
			return s
		}
	}
	return nil
}

func spanNames(spans tracetest.SpanStubs) []string {
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Name + "<" + s.Parent.SpanID().String()
	}
	return names
}

// wantAttrs fails unless every key of want has that value (compared as text).
func wantAttrs(t *testing.T, attrs []attribute.KeyValue, want map[attribute.Key]string) {
	t.Helper()
	have := map[attribute.Key]string{}
	for _, kv := range attrs {
		have[kv.Key] = kv.Value.String()
	}
	for k, v := range want {
		if have[k] != v {
			t.Errorf("attribute %s = %q, want %q (all: %v)", k, have[k], v, have)
		}
	}
}
