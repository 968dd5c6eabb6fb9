// Package svc is the composition root of the svc framework: it turns a configuration into a
// running server with the default boot chain of modules, and takes the host application's
// extensions as Options.
//
//	cfg, warnings, err := config.Load(config.LoadOptions{})
//	...
//	srv, err := svc.New(cfg, svc.WithModule(myModule))
//	...
//	err = srv.Run(ctx) // until ctx is cancelled (SIGINT/SIGTERM in cmd/svc)
//
// The lifecycle (ARCHITECTURE.md): validate configuration → open and ping data sources and the kv
// store → build modules in boot order → run enabled migrations → start modules → start workers →
// listen. A failure at any step undoes the earlier steps in reverse; shutdown drains in-flight
// requests, stops workers, stops modules in reverse and closes the databases.
package svc

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/kv"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/ops"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/storage"
)

// ShutdownGrace is how long in-flight requests may run after shutdown begins.
const ShutdownGrace = 30 * time.Second

// ModuleFunc builds one host module from the server's dependencies (database, logger, clock,
// catalog, the engine's authenticator, permission checker and error renderer). It runs at each
// build, after the built-in modules, and must not do I/O (see app.Module). Host resources,
// strategies, routes, workers, migrations and messages are all fields of the Module it returns.
type ModuleFunc func(deps app.Deps) (app.Module, error)

// Server is a configured svc instance. Start it with Run, or with Start/Handler/Stop when the
// caller owns the listener (tests, embedding in another server).
type Server struct {
	cfg    *config.Config
	opts   options
	logger *slog.Logger
	logs   *app.LogWriter // the default logger's buffer; nil with WithLogger
	clock  func() time.Time

	mu       sync.Mutex
	started  bool
	dbs      map[string]*db.DB
	kv       *redis.Client
	engine   *rpc.Engine
	modules  []app.Module
	workers  *app.Workers
	handler  http.Handler
	catalog  *i18n.Catalog // built with the modules' messages (build)
	security *security.Service
	storage  *storage.Service
	cron     *cron.Service
	push     *push.Service
	mcp      *mcp.Service
	approval *approval.Service // nil unless WithApproval
	// integration is the integration module; nil unless the host included it.
	integration *integration.Service
	events      *event.Bus
	// telemetry is the operations module: metrics registry, tracer provider, admin listener.
	telemetry *ops.Telemetry
}

// Events returns the event bus of svc.event (publish, subscribe, RunInTx, InspectStreams,
// Metrics); nil before Start. Host modules subscribe through app.Deps.Events while they are
// built (WithModule), which is before the bus starts.
func (s *Server) Events() *event.Bus { return s.events }

// Security returns the security module's service (tokens, user store, password policy); nil
// before Start.
func (s *Server) Security() *security.Service { return s.security }

// Storage returns the storage module's service (the adoption API for host code); nil before
// Start.
func (s *Server) Storage() *storage.Service { return s.storage }

// Cron returns the cron module's service (the Go management API of schedules and runs, the job
// registry); nil before Start.
func (s *Server) Cron() *cron.Service { return s.cron }

// Push returns the push module's Notifier (Push(ctx, msg, targets...), Kick) for host code; nil
// before Start. With svc.push.enabled = false it drops every push.
func (s *Server) Push() *push.Service { return s.push }

// MCP returns the MCP endpoint's service (its SDK server, for features added at run time); nil
// before Start.
func (s *Server) MCP() *mcp.Service { return s.mcp }

// Approval returns the approval module's service (its resolvers, for host code and the engine);
// nil before Start and without WithApproval.
func (s *Server) Approval() *approval.Service { return s.approval }

// Integration returns the integration module's service — its Invoke (Invoker) and typed
// integration.Call for host code; nil before Start or when the host did not include the module
// (WithIntegration).
func (s *Server) Integration() *integration.Service { return s.integration }

// Telemetry returns the operations module (Prometheus registry, tracer provider, admin
// handler); nil before Start.
func (s *Server) Telemetry() *ops.Telemetry { return s.telemetry }

// New validates cfg and prepares a server; it does no I/O and starts no goroutine (the default
// logger's flusher runs from Start to Stop). Every startup error of spec §7 is returned here,
// wrapped with its key path.
func New(cfg *config.Config, opts ...Option) (*Server, error) {
	if cfg == nil {
		return nil, errors.New("svc: nil configuration")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	logger := o.logger
	var logs *app.LogWriter
	if logger == nil {
		logs = app.NewLogWriter(os.Stderr)
		logger = app.NewLogger(logs, cfg.Log.Level.Slog())
	}
	clock := o.clock
	if clock == nil {
		clock = time.Now
	}
	return &Server{cfg: cfg, opts: o, logger: logger, logs: logs, clock: clock}, nil
}

// Config returns the effective configuration.
func (s *Server) Config() *config.Config { return s.cfg }

// Logger returns the server's logger.
func (s *Server) Logger() *slog.Logger { return s.logger }

// Engine returns the /api engine (nil before Start).
func (s *Server) Engine() *rpc.Engine { return s.engine }

// DB returns the primary data source (nil before Start).
func (s *Server) DB() *db.DB { return s.dbs[config.PrimaryDataSource] }

// Handler returns the root HTTP handler (nil before Start).
func (s *Server) Handler() http.Handler { return s.handler }

// Run starts the server, listens on svc.app.port (or the listener given by WithListener) and
// serves until ctx is cancelled; then it shuts down gracefully.
func (s *Server) Run(ctx context.Context) error {
	ln := s.opts.listener
	if ln == nil {
		var err error
		ln, err = net.Listen("tcp", ":"+strconv.Itoa(int(s.cfg.App.Port)))
		if err != nil {
			return fmt.Errorf("svc: listen on svc.app.port %d: %w", s.cfg.App.Port, err)
		}
	}
	if err := s.Start(ctx); err != nil {
		ln.Close()
		return err
	}
	s.logger.Info("svc listening", slog.String("addr", ln.Addr().String()), slog.String("app", s.cfg.App.Name))
	serveErr := app.Serve(ctx, ln, s.handler, ShutdownGrace, s.logger)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	return errors.Join(serveErr, s.Stop(stopCtx))
}

// Start starts the default logger's flusher, opens the data sources and the kv store, builds
// the modules, runs the enabled migrations, starts modules and workers and assembles the
// handler. On failure everything already done is undone in reverse.
func (s *Server) Start(ctx context.Context) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("svc: server already started")
	}
	var undo []func(context.Context) error
	defer func() {
		if err != nil {
			rctx := context.WithoutCancel(ctx)
			for i := len(undo) - 1; i >= 0; i-- {
				err = errors.Join(err, undo[i](rctx))
			}
		}
	}()

	if s.logs != nil {
		s.logs.Start()
		undo = append(undo, func(context.Context) error { return s.logs.Close() })
	}
	if err = s.openData(ctx); err != nil {
		return err
	}
	undo = append(undo, s.closeData)

	if err = s.build(); err != nil {
		return err
	}
	if err = s.migrate(ctx); err != nil {
		return err
	}
	if err = app.StartModules(ctx, s.logger, s.modules); err != nil {
		return err
	}
	mods := s.modules
	undo = append(undo, func(c context.Context) error { return app.StopModules(c, s.logger, mods) })

	s.workers = app.StartWorkers(ctx, s.logger, app.CollectWorkers(s.modules))
	s.started = true
	return nil
}

// Stop stops workers, stops modules in reverse boot order, closes the data sources and stops
// the default logger's flusher after flushing it.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return nil
	}
	s.started = false
	var errs []error
	if s.workers != nil {
		errs = append(errs, s.workers.Stop(ctx))
	}
	errs = append(errs, app.StopModules(ctx, s.logger, s.modules), s.closeData(ctx))
	if s.logs != nil {
		errs = append(errs, s.logs.Close())
	}
	return errors.Join(errs...)
}

// Migrate opens the data sources, builds the modules and applies every module's pending
// migrations whatever its auto_migrate setting (`svc migrate`), then closes the data sources. It
// returns the migrations it applied, in order.
func (s *Server) Migrate(ctx context.Context) ([]db.Migration, error) {
	if err := s.openData(ctx); err != nil {
		return nil, err
	}
	defer s.closeData(context.WithoutCancel(ctx))
	if err := s.build(); err != nil {
		return nil, err
	}
	sets := s.migrationSets(true)
	pending, err := db.Pending(ctx, s.DB(), sets...)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, s.DB(), sets...); err != nil {
		return nil, err
	}
	return pending, nil
}

func (s *Server) openData(ctx context.Context) error {
	dbs, err := db.OpenAll(ctx, s.cfg.DataSources)
	if err != nil {
		return err
	}
	s.dbs = dbs
	client, err := kv.Open(ctx, s.cfg.KVStore)
	if err != nil {
		s.closeDBs()
		return err
	}
	s.kv = client
	return nil
}

func (s *Server) closeData(context.Context) error {
	var errs []error
	if s.kv != nil {
		errs = append(errs, s.kv.Close())
		s.kv = nil
	}
	errs = append(errs, s.closeDBs())
	return errors.Join(errs...)
}

func (s *Server) closeDBs() error {
	var errs []error
	for name, d := range s.dbs {
		if err := d.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close data source %s: %w", name, err))
		}
	}
	s.dbs = nil
	return errors.Join(errs...)
}

// ready reports whether every data source and the kv store answer (GET /readyz).
func (s *Server) ready(ctx context.Context) error {
	for name, d := range s.dbs {
		if err := d.PingContext(ctx); err != nil {
			return fmt.Errorf("data source %s: %w", name, err)
		}
	}
	if s.kv != nil {
		if err := s.kv.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("kvstore: %w", err)
		}
	}
	return nil
}

func (s *Server) migrate(ctx context.Context) error {
	sets := s.migrationSets(false)
	if len(sets) == 0 {
		return nil
	}
	return db.Migrate(ctx, s.DB(), sets...)
}

// migrationSets lists the modules' migrations: all of them, or only those with auto_migrate on.
func (s *Server) migrationSets(all bool) []db.Migrations {
	var sets []db.Migrations
	for _, m := range s.modules {
		if m.Migrations != nil && (all || m.AutoMigrate) {
			sets = append(sets, *m.Migrations)
		}
	}
	return sets
}

func decodeKey(key string) ([]byte, error) {
	if key == "" {
		return nil, nil
	}
	return base64.StdEncoding.DecodeString(key)
}
