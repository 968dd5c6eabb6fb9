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
// A caller that owns the listener uses Start instead, which returns the Running server's parts
// (handler, engine, modules), and Stop.
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
	"sync"
	"time"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/audit"
	"github.com/svc-framework/svc/backup"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/ops"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/security/token"
	"github.com/svc-framework/svc/storage"
)

// ShutdownGrace is how long in-flight requests may run after shutdown begins.
const ShutdownGrace = 30 * time.Second

// ModuleFunc builds one host module from the server's dependencies: both parts, the platform
// (database, logger, clock, catalog, bus) and the engine's API (authenticator, permission
// checker, error renderer, body reader). It runs at each
// build, after the built-in modules, and must not do I/O (see app.Module). Host resources,
// strategies, routes, workers, migrations and messages are all fields of the Module it returns.
type ModuleFunc func(deps app.Deps) (app.Module, error)

// Server is a configured svc instance. Start it with Run, or with Start/Stop when the caller owns
// the listener (tests, embedding in another server): Start returns the Running server's parts.
// Its fields are set by New and never change; what a start opens and runs belongs to the Running
// it returns, so Start, Stop and the Running's handler (GET /readyz) may run concurrently.
type Server struct {
	cfg    *config.Config
	opts   options
	logger *slog.Logger
	logs   *app.LogWriter // the default logger's buffer; nil with WithLogger
	clock  func() time.Time

	mu      sync.Mutex // held by Start and Stop for their whole run: one start or stop at a time
	running *Running   // from Start to Stop; nil otherwise
}

// Running is a started server: what Start opened, built and started, in boot order. Its values
// stay valid until Stop (after Stop they belong to a stopped server, and its readiness check
// reports the closed connections). A Server started again gets a new Running.
type Running struct {
	data        *dataSources // the data sources and kv store this start opened
	workers     *app.Workers // nil until the modules have started
	engine      *rpc.Engine
	handler     http.Handler
	modules     []app.Module
	db          *db.DB
	events      *event.Bus
	telemetry   *ops.Telemetry
	security    *security.Service
	storage     *storage.Service
	integration *integration.Service // nil without WithIntegration
	backup      *backup.Service
	cron        *cron.Service
	push        *push.Service
	approval    *approval.Service // nil without WithApproval
	mcp         *mcp.Service
	audit       *audit.Service
}

// Engine returns the /api engine.
func (r *Running) Engine() *rpc.Engine { return r.engine }

// Handler returns the root HTTP handler: the outer middleware, /api and the modules' routes.
func (r *Running) Handler() http.Handler { return r.handler }

// DB returns the primary data source.
func (r *Running) DB() *db.DB { return r.db }

// Events returns the event bus of svc.event (publish, subscribe, RunInTx, InspectStreams,
// Metrics). Host modules subscribe through app.Platform.Events while they are built (WithModule),
// which is before the bus starts.
func (r *Running) Events() *event.Bus { return r.events }

// Telemetry returns the operations module (Prometheus registry, tracer provider, admin
// handler).
func (r *Running) Telemetry() *ops.Telemetry { return r.telemetry }

// Security returns the security module's service (tokens, user store, password policy).
func (r *Running) Security() *security.Service { return r.security }

// Storage returns the storage module's service (the adoption API for host code).
func (r *Running) Storage() *storage.Service { return r.storage }

// Integration returns the integration module's service — its Invoke (Invoker) and typed
// integration.Call for host code; nil when the host did not include the module
// (WithIntegration).
func (r *Running) Integration() *integration.Service { return r.integration }

// Cron returns the cron module's service (the Go management API of schedules and runs, the job
// registry).
func (r *Running) Cron() *cron.Service { return r.cron }

// Audit returns the audit trail (svc.audit): its counts, and Record for a host's own events.
func (r *Running) Audit() *audit.Service { return r.audit }

// Backup returns the backup module: Create, Start, Get, Delete, Open, Prune (issue #47).
func (r *Running) Backup() *backup.Service { return r.backup }

// Push returns the push module's Notifier (Push(ctx, msg, targets...), Kick) for host code.
// With svc.push.enabled = false it drops every push.
func (r *Running) Push() *push.Service { return r.push }

// Approval returns the approval module's service (its resolvers, for host code and the
// engine); nil when the host did not include the module (WithApproval).
func (r *Running) Approval() *approval.Service { return r.approval }

// MCP returns the MCP endpoint's service (its SDK server, for features added at run time).
func (r *Running) MCP() *mcp.Service { return r.mcp }

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
	cfg = withModuleEvents(cfg, o)
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

// withModuleEvents returns a copy of cfg whose svc.event routes the events the modules publish
// inside their own transactions to a transactional transport: each module declares its pattern
// (storage.EventPattern; approval.EventPattern when the host includes approval) and every
// pattern no svc.event.routing rule covers gets the outbox (event.WithTransactionalRoutes). The
// security module's node-local signals (token.SignalPattern: revocations and user changes, which
// push subscribes to) go to the memory transport ahead of every rule (event.WithLocalRoutes). The
// result is the server's Config: its fields are what the bus runs. The caller's cfg is not
// modified.
func withModuleEvents(cfg *config.Config, o options) *config.Config {
	patterns := []string{storage.EventPattern}
	if o.approval != nil {
		patterns = append(patterns, approval.EventPattern)
	}
	eff := *cfg
	eff.Event = event.WithLocalRoutes(event.WithTransactionalRoutes(cfg.Event, patterns...), token.SignalPattern)
	return &eff
}

// Config returns the effective configuration: the one given to New, with the event routes the
// modules need (withModuleEvents).
func (s *Server) Config() *config.Config { return s.cfg }

// Logger returns the server's logger.
func (s *Server) Logger() *slog.Logger { return s.logger }

// Run starts the server, listens on svc.app.host and svc.app.port (or the listener given by
// WithListener) and serves until ctx is cancelled; then it shuts down gracefully.
func (s *Server) Run(ctx context.Context) error {
	ln := s.opts.listener
	if ln == nil {
		var err error
		ln, err = net.Listen("tcp", s.cfg.App.ListenAddress())
		if err != nil {
			return fmt.Errorf("svc: listen on svc.app.host %q, svc.app.port %d: %w", s.cfg.App.Host, s.cfg.App.Port, err)
		}
	}
	r, err := s.Start(ctx)
	if err != nil {
		ln.Close()
		return err
	}
	s.logger.Info("svc listening", slog.String("addr", ln.Addr().String()), slog.String("app", s.cfg.App.Name))
	serveErr := app.Serve(ctx, ln, r.Handler(), ShutdownGrace, s.logger)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	return errors.Join(serveErr, s.Stop(stopCtx))
}

// Start starts the default logger's flusher, opens the data sources and the kv store, builds
// the modules, runs the enabled migrations, starts modules and workers and assembles the
// handler, and returns them. On failure everything already done is undone in reverse.
func (s *Server) Start(ctx context.Context) (_ *Running, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running != nil {
		return nil, errors.New("svc: server already started")
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
	data, err := openData(ctx, s.cfg)
	if err != nil {
		return nil, err
	}
	undo = append(undo, data.close)

	r, err := s.build(data)
	if err != nil {
		return nil, err
	}
	if err = migrate(ctx, r); err != nil {
		return nil, err
	}
	if err = app.StartModules(ctx, s.logger, r.modules); err != nil {
		return nil, err
	}
	undo = append(undo, func(c context.Context) error { return app.StopModules(c, s.logger, r.modules) })

	r.workers = app.StartWorkers(ctx, s.logger, app.CollectWorkers(r.modules))
	s.running = r
	return r, nil
}

// Stop stops workers, stops modules in reverse boot order, closes the data sources and stops
// the default logger's flusher after flushing it.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.running
	if r == nil {
		return nil
	}
	s.running = nil
	var errs []error
	if r.workers != nil {
		errs = append(errs, r.workers.Stop(ctx))
	}
	errs = append(errs, app.StopModules(ctx, s.logger, r.modules), r.data.close(ctx))
	if s.logs != nil {
		errs = append(errs, s.logs.Close())
	}
	return errors.Join(errs...)
}

// Migrate opens the data sources, builds the modules and applies every module's pending
// migrations whatever its auto_migrate setting (`svc migrate`), then closes the data sources. It
// returns the migrations it applied, in order.
func (s *Server) Migrate(ctx context.Context) ([]db.Migration, error) {
	data, err := openData(ctx, s.cfg)
	if err != nil {
		return nil, err
	}
	defer data.close(context.WithoutCancel(ctx))
	r, err := s.build(data)
	if err != nil {
		return nil, err
	}
	sets := migrationSets(r.modules, true)
	pending, err := db.Pending(ctx, r.db, sets...)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, r.db, sets...); err != nil {
		return nil, err
	}
	return pending, nil
}

// migrate applies the migrations of r's modules with auto_migrate on.
func migrate(ctx context.Context, r *Running) error {
	sets := migrationSets(r.modules, false)
	if len(sets) == 0 {
		return nil
	}
	return db.Migrate(ctx, r.db, sets...)
}

// migrationSets lists the modules' migrations: all of them, or only those with auto_migrate on.
func migrationSets(mods []app.Module, all bool) []db.Migrations {
	var sets []db.Migrations
	for _, m := range mods {
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
