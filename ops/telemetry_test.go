package ops

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func newTelemetry(t *testing.T, mutate func(*config.Config), opts Options) *Telemetry {
	t.Helper()
	cfg := config.Default()
	if mutate != nil {
		mutate(cfg)
	}
	tel, err := New(cfg, slog.New(slog.DiscardHandler), opts)
	if err != nil {
		t.Fatal(err)
	}
	return tel
}

// TestOffByDefault: with the default configuration there is no observer, no served registry,
// no tracer provider and no registerer for the modules (app.Deps.Metrics nil).
func TestOffByDefault(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t, nil, Options{})
	if tel.Observer() != nil || tel.Gatherer() != nil || tel.TracerProvider() != nil {
		t.Errorf("observer %v, gatherer %v, tracer %v; want all nil", tel.Observer(), tel.Gatherer(), tel.TracerProvider())
	}
	if tel.Registerer() != nil {
		t.Fatal("Registerer() != nil with metrics off, want nil: modules then register and count nothing")
	}
	if err := tel.Module().Start(context.Background()); err != nil {
		t.Fatalf("start with everything off: %v", err)
	}
	if tel.server != nil {
		t.Error("admin listener opened with metrics and pprof off")
	}
}

// TestOperationCounters: each (code, status) pair of an operation gets its own series, the
// in-flight gauge returns to zero, and a 429/1401 counts as rate limited.
func TestOperationCounters(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t, func(c *config.Config) { c.Metrics.Enabled = true }, Options{})
	op := tel.Observer().Operation("shop/order", "create", "v1")
	ctx := context.Background()
	for _, out := range []rpc.Outcome{{Status: 200}, {Status: 200}, {Status: 429, Code: rpc.CodeTooManyRequests}, {Status: 403, Code: rpc.CodeAccessDenied}} {
		op.Resolved(ctx)
		out.Resolved, out.Elapsed = true, time.Millisecond
		op.Done(ctx, out)
	}
	m := tel.api
	for _, tt := range []struct {
		code, status string
		want         float64
	}{{"0", "200", 2}, {"1401", "429", 1}, {"1100", "403", 1}} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues("shop/order", "create", "v1", tt.code, tt.status)); got != tt.want {
			t.Errorf("requests{code=%s,status=%s} = %g, want %g", tt.code, tt.status, got, tt.want)
		}
	}
	if got := testutil.ToFloat64(m.inFlight.WithLabelValues("shop/order", "create", "v1")); got != 0 {
		t.Errorf("in flight = %g, want 0", got)
	}
	if got := testutil.ToFloat64(m.rateLimited.WithLabelValues("shop/order", "create", "v1")); got != 1 {
		t.Errorf("rate limited = %g, want 1", got)
	}
}

// TestOperationCountersAllocate: with metrics on, an observed call allocates nothing once its
// (code, status) series exists.
func TestOperationCountersAllocate(t *testing.T) {
	// Not parallel: testing.AllocsPerRun counts every goroutine's allocations.
	tel := newTelemetry(t, func(c *config.Config) { c.Metrics.Enabled = true }, Options{})
	op := tel.Observer().Operation("shop/order", "get", "v1")
	ctx := context.Background()
	out := rpc.Outcome{Status: 200, Resolved: true, Elapsed: time.Millisecond}
	op.Done(ctx, out)
	if n := testing.AllocsPerRun(100, func() { op.Resolved(ctx); op.Done(ctx, out) }); n != 0 {
		t.Errorf("allocations per observed call = %g, want 0", n)
	}
}

// TestTracerProviderOption: a provider passed in turns tracing on whatever the configuration.
func TestTracerProviderOption(t *testing.T) {
	t.Parallel()
	tp := sdktrace.NewTracerProvider()
	tel := newTelemetry(t, nil, Options{TracerProvider: tp})
	if tel.TracerProvider() != tp || tel.Observer() == nil {
		t.Errorf("tracer %v, observer %v; want the given provider and an observer", tel.TracerProvider(), tel.Observer())
	}
}
