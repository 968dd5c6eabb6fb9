package svc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/ops"
	"github.com/svc-framework/svc/svctest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestIntegrationMetricsAndSpans: one outbound invocation through an adapter that makes one HTTP
// call is counted by svc_integration_invocations_total (failure "none") with its duration, and
// the call, made inside a traced request, is its child client span whose traceparent reaches the
// external system.
func TestIntegrationMetricsAndSpans(t *testing.T) {
	var traceparent atomic.Value
	external := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		traceparent.Store(r.Header.Get("traceparent"))
		var in struct{ Order int }
		_ = json.NewDecoder(r.Body).Decode(&in)
		_ = json.NewEncoder(w).Encode(map[string]int{"order": in.Order})
	}))
	t.Cleanup(external.Close)

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ln := adminListener(t)
	srv := svctest.New(t, svctest.WithConfig(func(c *config.Config) {
		c.Metrics.Enabled = true
		c.Security.Roles = map[string][]string{"admin": {"*"}}
	}),
		svctest.WithOptions(svc.WithTelemetry(ops.Options{Listener: ln, TracerProvider: tp}),
			svc.WithIntegration(integration.Options{})))

	admin := svctest.WithToken(srv.Token(t, svctest.User("admin", "admin")))
	create := func(resource string, params map[string]any) string {
		t.Helper()
		r := srv.Call(t, resource, "create", params, admin)
		if r.Code != 0 {
			t.Fatalf("%s create: code %d (%s)", resource, r.Code, r.Message)
		}
		var out struct{ ID string }
		if err := json.Unmarshal(r.Data, &out); err != nil {
			t.Fatal(err)
		}
		return out.ID
	}
	contract := create("integration/contract", map[string]any{"code": "order.check", "name": "Order check"})
	system := create("integration/system", map[string]any{"code": "SHOP", "name": "Shop", "baseUrl": external.URL, "timeoutMs": 5000})
	create("integration/adapter", map[string]any{"systemId": system, "contractId": contract, "direction": "outbound",
		"script": `const r = http.post("/orders", {order: input.id}); return {echoed: r.json().order}`})

	// Host code calling inside a traced request: the outbound call becomes its child span.
	ctx, host := tp.Tracer("test").Start(context.Background(), "host request")
	res, err := srv.Integration().Invoke(ctx, "order.check", map[string]any{"id": 7}, integration.WithSystem("SHOP"))
	host.End()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Output()); got != `{"echoed":7}` {
		t.Fatalf("output = %s", got)
	}

	fams := scrape(t, ln.Addr().String())
	outbound := map[string]string{"system": "SHOP", "contract": "order.check", "direction": "outbound"}
	wantValue(t, fams, "svc_integration_invocations_total", map[string]string{"system": "SHOP", "contract": "order.check", "direction": "outbound", "failure": "none"}, 1)
	if v, ok := value(fams, "svc_integration_invocation_seconds_total", outbound); !ok || v <= 0 {
		t.Errorf("svc_integration_invocation_seconds_total%v = %g (present %v), want > 0", outbound, v, ok)
	}

	span := findSpan(exp.GetSpans(), "HTTP POST")
	if span == nil {
		t.Fatalf("no client span HTTP POST among %v", spanNames(exp.GetSpans()))
	}
	if span.Parent.SpanID() != host.SpanContext().SpanID() {
		t.Errorf("client span parent = %s, want the host request's span", span.Parent.SpanID())
	}
	got, _ := traceparent.Load().(string)
	if want := span.SpanContext.SpanID().String(); got == "" || !containsSpan(got, want) {
		t.Errorf("external system received traceparent %q, want the client span %s", got, want)
	}
}

// containsSpan reports whether a W3C traceparent names span id.
func containsSpan(traceparent, id string) bool {
	return len(traceparent) == 55 && traceparent[36:52] == id
}
