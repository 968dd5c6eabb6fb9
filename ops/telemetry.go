package ops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/rpc"
	"go.opentelemetry.io/otel/trace"
)

// shutdownTimeout bounds the admin server's drain and the final span export at Stop.
const shutdownTimeout = 10 * time.Second

// Options are the host's and the tests' extension points of the operations module.
type Options struct {
	// TracerProvider replaces the OTLP exporter of svc.tracing: spans go to it and tracing is on
	// whatever svc.tracing.enabled says (tests pass an SDK provider with an in-memory exporter).
	// The module does not shut it down.
	TracerProvider trace.TracerProvider
	// Listener serves the admin endpoints instead of listening on svc.admin.address (tests).
	Listener net.Listener
}

// Telemetry is the operations module at run time: the Prometheus registry, the tracer
// provider, the /api observer and the admin listener. Build it with New; every accessor is safe
// on a Telemetry whose features are off.
type Telemetry struct {
	cfg      *config.Config
	log      *slog.Logger
	registry *prometheus.Registry // nil with metrics off
	api      *apiMetrics
	tp       trace.TracerProvider // nil with tracing off
	shutdown func(context.Context) error
	ln       net.Listener
	server   *http.Server
}

// New builds the module from svc.metrics, svc.tracing, svc.pprof and svc.admin. It does no I/O:
// the OTLP exporter connects lazily and the admin listener opens at Start.
func New(cfg *config.Config, logger *slog.Logger, opts Options) (*Telemetry, error) {
	t := &Telemetry{cfg: cfg, log: logger, ln: opts.Listener, shutdown: func(context.Context) error { return nil }}
	if cfg.Metrics.Enabled {
		t.registry = prometheus.NewRegistry()
		t.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		api, err := newAPIMetrics(t.registry)
		if err != nil {
			return nil, err
		}
		t.api = api
	}
	switch {
	case opts.TracerProvider != nil:
		t.tp = opts.TracerProvider
	case cfg.Tracing.Enabled:
		tp, err := newOTLPProvider(cfg.Tracing)
		if err != nil {
			return nil, fmt.Errorf("svc.tracing: %w", err)
		}
		t.tp, t.shutdown = tp, tp.Shutdown
	}
	return t, nil
}

// Registerer is where modules register their own collectors (app.Platform.Metrics), nil with
// metrics off: a module then registers nothing, subscribes to nothing and reads nothing at
// scrape time, so metrics off cost nothing.
func (t *Telemetry) Registerer() prometheus.Registerer {
	if t.registry == nil {
		return nil // an untyped nil: a *Registry nil in the interface would pass a module's nil check
	}
	return t.registry
}

// Gatherer returns the registry served on the metrics path, nil with metrics off.
func (t *Telemetry) Gatherer() prometheus.Gatherer {
	if t.registry == nil {
		return nil
	}
	return t.registry
}

// TracerProvider returns the provider of every span, nil with tracing off.
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tp }

// Observer returns the /api observer (rpc.EngineConfig.Observer), nil when both metrics and
// tracing are off so the engine does no observing work at all.
func (t *Telemetry) Observer() rpc.Observer {
	if t.api == nil && t.tp == nil {
		return nil
	}
	o := &apiObserver{metrics: t.api}
	if t.tp != nil {
		o.tracing = &apiTracing{tracer: t.tp.Tracer(TracerName)}
	}
	return o
}

// AdminHandler returns the admin endpoints: the metrics path with svc.metrics.enabled and
// /debug/pprof/ with svc.pprof.enabled; everything else is 404.
func (t *Telemetry) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	if t.registry != nil {
		mux.Handle("GET "+t.cfg.Metrics.Path, promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{
			ErrorLog: slog.NewLogLogger(t.log.Handler(), slog.LevelWarn), Timeout: app.ScrapeTimeout}))
	}
	if t.cfg.Pprof.Enabled {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// Module returns the module of the boot chain: Start opens the admin listener when metrics or
// pprof is on; Stop closes it and flushes the spans still queued for export.
func (t *Telemetry) Module() app.Module {
	return app.Module{Name: "ops", Start: t.start, Stop: t.stop}
}

func (t *Telemetry) start(context.Context) error {
	if !t.cfg.Metrics.Enabled && !t.cfg.Pprof.Enabled {
		return nil
	}
	ln := t.ln
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", t.cfg.Admin.Address); err != nil {
			return fmt.Errorf("svc.admin.address %s: %w", t.cfg.Admin.Address, err)
		}
	}
	t.server = &http.Server{Handler: t.AdminHandler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(t.log.Handler(), slog.LevelWarn)}
	go func() {
		if err := t.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.log.Error("ops: admin listener stopped", slog.Any("error", err))
		}
	}()
	t.log.Info("ops: admin listening", slog.String("addr", ln.Addr().String()))
	return nil
}

func (t *Telemetry) stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, shutdownTimeout)
	defer cancel()
	var errs []error
	if t.server != nil {
		errs = append(errs, t.server.Shutdown(ctx))
		t.server = nil
	}
	errs = append(errs, t.shutdown(ctx))
	return errors.Join(errs...)
}
