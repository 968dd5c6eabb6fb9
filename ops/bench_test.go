package ops

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

type benchParams struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

func benchHandler(_ context.Context, _ rpc.Call, p benchParams) (benchParams, error) { return p, nil }

// benchServe is the /api engine's public call with small params (rpc's BenchmarkDispatchPublic)
// under the given observer: nil is metrics and tracing off.
func benchServe(b *testing.B, obs rpc.Observer) {
	e, err := rpc.NewEngine(rpc.EngineConfig{Observer: obs, DefaultLimit: rpc.Limit{Max: 1 << 30, Period: 1 << 40}})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Register(rpc.Resource{Name: "bench/things", Ops: []rpc.Op{rpc.Handle("get", benchHandler, rpc.Public())}}); err != nil {
		b.Fatal(err)
	}
	if err := e.Validate(); err != nil {
		b.Fatal(err)
	}
	raw := []byte(`{"resource":"bench/things","action":"get","version":"v1","params":{"id":7,"name":"widget"}}`)
	r := httptest.NewRequest(http.MethodPost, "/api", nil)
	r.Header.Set("Content-Type", "application/json")
	r = r.WithContext(rpc.WithRequestInfo(r.Context(), rpc.RequestInfo{ID: "bench", ClientIP: "10.0.0.1"}))
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
		clear(w.h)
		e.ServeHTTP(w, r)
	}
	if w.status != http.StatusOK {
		b.Fatalf("status = %d", w.status)
	}
}

type discard struct {
	h      http.Header
	status int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(s int)           { d.status = s }

func benchTelemetry(b *testing.B, metrics bool, opts Options) *Telemetry {
	cfg := config.Default()
	cfg.Metrics.Enabled = metrics
	t, err := New(cfg, slog.New(slog.DiscardHandler), opts)
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// BenchmarkAPIOff: metrics and tracing off (the default): no observer at all.
func BenchmarkAPIOff(b *testing.B) { benchServe(b, benchTelemetry(b, false, Options{}).Observer()) }

// BenchmarkAPIMetrics: svc.metrics.enabled, tracing off.
func BenchmarkAPIMetrics(b *testing.B) { benchServe(b, benchTelemetry(b, true, Options{}).Observer()) }

// BenchmarkAPITracing: metrics on and every call traced by the SDK (spans go to no exporter),
// the upper bound of svc.tracing's cost on the engine.
func BenchmarkAPITracing(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	benchServe(b, benchTelemetry(b, true, Options{TracerProvider: tp}).Observer())
}

// BenchmarkObserverCall is the work svc.metrics adds to one /api call, alone: the engine's
// clock read and the observer's Begin, Resolved and Done. Compare it with BenchmarkAPIOff's
// time per call; unlike the difference of two whole-call benchmarks it does not drown in the
// noise of a shared machine.
func BenchmarkObserverCall(b *testing.B) {
	obs := benchTelemetry(b, true, Options{}).Observer()
	op := obs.Operation("bench/things", "get", "v1")
	r := httptest.NewRequest(http.MethodPost, "/api", nil)
	w := &discard{h: http.Header{}}
	ctx := r.Context()
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		c := obs.Begin(ctx, w, r)
		op.Resolved(c)
		op.Done(c, rpc.Outcome{Status: http.StatusOK, Resolved: true, Elapsed: time.Since(start)})
	}
}
