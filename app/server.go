package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// HandlerConfig assembles the HTTP surface of the server.
type HandlerConfig struct {
	// API serves POST /api (the rpc engine).
	API http.Handler
	// Modules contribute their plain routes.
	Modules []Module
	// Ready checks data sources and the kv store for GET /readyz.
	Ready func(ctx context.Context) error
	// BodyLimit caps request bodies of non-/api routes (the engine enforces it on /api itself).
	BodyLimit int64
	// Proxies decides whose X-Forwarded-For is trusted.
	Proxies Proxies
	// CORSEnabled and CORSOrigins are svc.cors.
	CORSEnabled bool
	CORSOrigins []string
	// Logger receives the access log and panics.
	Logger *slog.Logger
	// AccessLog writes one info line per request.
	AccessLog bool
	// Clock is the time source (time.Now when nil).
	Clock func() time.Time
}

// NewHandler builds the server's root handler: the outer middlewares around a ServeMux holding
// POST /api, GET /healthz, GET /readyz and every module route. A duplicate or malformed route
// pattern is an error naming the module.
func NewHandler(cfg HandlerConfig) (h http.Handler, err error) {
	mux := http.NewServeMux()
	register := func(owner, pattern string, handler http.Handler) (err error) {
		defer func() {
			if v := recover(); v != nil { // ServeMux panics on conflicting patterns
				err = fmt.Errorf("module %s: route %q: %v", owner, pattern, v)
			}
		}()
		mux.Handle(pattern, handler)
		return nil
	}
	if cfg.API != nil {
		if err := register("rpc", "/api", cfg.API); err != nil {
			return nil, err
		}
	}
	if err := register("app", "GET /healthz", http.HandlerFunc(healthz)); err != nil {
		return nil, err
	}
	if err := register("app", "GET /readyz", readyz(cfg.Ready, cfg.Modules)); err != nil {
		return nil, err
	}
	for _, m := range cfg.Modules {
		for _, rt := range m.Routes {
			handler := rt.Handler
			if cfg.BodyLimit > 0 {
				handler = limitBody(handler, cfg.BodyLimit)
			}
			if err := register(m.Name, rt.Pattern, handler); err != nil {
				return nil, err
			}
		}
	}
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &outer{
		next:    mux,
		proxies: cfg.Proxies,
		cors:    newCORS(cfg.CORSEnabled, cfg.CORSOrigins),
		logger:  logger,
		access:  cfg.AccessLog,
		clock:   clock,
	}, nil
}

func limitBody(next http.Handler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write([]byte(`{"status":"ok"}`))
}

// readyz answers 200 when the data sources, the kv store and every module report ready, else
// 503 naming what is not (never the cause's details, which may hold addresses).
func readyz(ready func(context.Context) error, mods []Module) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		var failed []string
		if ready != nil {
			if err := ready(ctx); err != nil {
				failed = append(failed, "data")
			}
		}
		for _, m := range mods {
			if m.Ready != nil && m.Ready(ctx) != nil {
				failed = append(failed, m.Name)
			}
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if len(failed) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, `{"status":"unavailable","failed":["%s"]}`, strings.Join(failed, `","`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ready"}`))
	})
}

// Serve serves h on ln until ctx is cancelled, then shuts down gracefully: it stops accepting,
// lets in-flight requests finish within grace, and returns. A listener error is returned as is.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration, logger *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", slog.Duration("grace", grace))
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
		return fmt.Errorf("app: in-flight requests did not finish within %s", grace)
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
