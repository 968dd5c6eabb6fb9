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

	"github.com/svc-framework/svc/rpc"
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
	// BodyReadIdleTimeout is svc.app.body_read_idle_timeout: every read of a request body, on
	// any route, must receive data within it, else the read fails and the connection closes
	// (bodyidle.go). Zero disables it.
	BodyReadIdleTimeout time.Duration
	// BodyMinRate (bytes per second) and BodyMinRateGrace are svc.app.body_min_rate and
	// body_min_rate_grace: once the grace has passed, a body must have averaged the rate over
	// the time the server waited for it, else its read fails and the connection closes
	// (bodyidle.go). A zero rate leaves only the idle timeout; they apply only with it.
	BodyMinRate      int64
	BodyMinRateGrace time.Duration
	// BodyMemoryRate is svc.app.body_memory_rate (bytes per second): a body the /api engine
	// holds in memory must have arrived whole by its start + BodyMinRateGrace + held / rate
	// (bodyidle.go, rpc.BodyHolder). Zero: no such deadline. Applies only with the idle timeout.
	BodyMemoryRate int64
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
	// Compress gzips responses for clients that accept it (wire-core §1.6; compress.go has the
	// rules). svc turns it off while the protected body transport is on, as the original does.
	Compress bool
	// Errors renders an error as the {code, message, data} envelope with its status (the rpc
	// engine's WriteError). It answers requests no route takes (404/1200, or 405/1900 with Allow
	// when the path exists for other methods) and panics outside /api (500/1900). Nil writes a
	// fixed English envelope.
	Errors func(w http.ResponseWriter, r *http.Request, err error)
}

// NewHandler builds the server's root handler: the outer middlewares around a ServeMux holding
// /api (also /api/, as the original's router is not strict about the slash), GET /healthz,
// GET /readyz, every module route and, unless a module claims "/", the envelope fallback for
// everything else. A duplicate or malformed route pattern is an error naming the module.
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
		if err := register("rpc", "/api/{$}", cfg.API); err != nil {
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
	errs := cfg.Errors
	if errs == nil {
		errs = writeFixedError
	}
	// Registered last, "/" takes only what no other pattern matches; a module that registered
	// "/" itself keeps it (the conflict is not an error here).
	fb := fallback{mux: mux, errors: errs}
	_ = register("app", "/", fb)
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &outer{
		next:    connectGuard{mux: mux, fallback: fb},
		errors:  errs,
		gzip:    cfg.Compress,
		proxies: cfg.Proxies,
		cors:    newCORS(cfg.CORSEnabled, cfg.CORSOrigins),
		logger:  logger,
		access:  cfg.AccessLog,
		clock:   clock,
		pace: bodyPace{idle: cfg.BodyReadIdleTimeout, rate: cfg.BodyMinRate, grace: cfg.BodyMinRateGrace,
			hold: cfg.BodyMemoryRate},
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

// probeMethods are the methods tried to tell a wrong method (405) from an unknown path (404).
var probeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// fallback answers what no route takes with the envelope, as the original's single error handler
// does (wire-core §1.5): 405/1900 with Allow when the path is routed for other methods, else
// 404/1200.
// connectGuard sends CONNECT requests whose target is not a path — the authority form
// "host:port" or "*" — to the fallback. ServeMux routes CONNECT by host and raw path and answers
// those itself with a plain-text 404 or an empty 400, outside the envelope (issue #11 item 8).
// CONNECT with a path ("CONNECT /api") goes through the mux like any method: /api answers
// 405/1900 with Allow: POST, an unknown path 404/1200.
type connectGuard struct {
	mux      *http.ServeMux
	fallback http.Handler
}

func (g connectGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect && !strings.HasPrefix(r.URL.Path, "/") {
		g.fallback.ServeHTTP(w, r)
		return
	}
	g.mux.ServeHTTP(w, r)
}

type fallback struct {
	mux    *http.ServeMux
	errors func(w http.ResponseWriter, r *http.Request, err error)
}

func (f fallback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var allow []string
	probe := *r
	for _, m := range probeMethods {
		probe.Method = m
		if _, pattern := f.mux.Handler(&probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
	}
	if len(allow) == 0 {
		f.errors(w, r, rpc.ErrNotFound)
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	f.errors(w, r, rpc.ErrMethodNotAllowed)
}

// writeFixedError is the renderer when the server has no rpc engine: the envelope with the
// error's status and code and an English message.
func writeFixedError(w http.ResponseWriter, _ *http.Request, err error) {
	re, ok := rpc.AsError(err)
	if !ok {
		re = rpc.ErrUnknown
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(re.HTTPStatus())
	_, _ = fmt.Fprintf(w, `{"code":%d,"message":%q,"data":null}`, re.Code, re.Key)
}
