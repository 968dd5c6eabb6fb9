package svc

import (
	"context"
	"fmt"
	"net/http"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/audit"
	"github.com/svc-framework/svc/backup"
	"github.com/svc-framework/svc/console"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/mcp"
	"github.com/svc-framework/svc/monitor"
	"github.com/svc-framework/svc/ops"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/schema"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/storage"
)

// build is the boot chain (spec §1, ARCHITECTURE.md): it creates the message catalog, the
// operations module and the event bus, then builds each module in boot order — every module is
// appended to the list right after it is built, so the build reads top to bottom as the start
// order (modules stop in reverse) — then registers everything in the /api engine and assembles
// the HTTP handler. It does no I/O. What a module needs from an earlier one is passed to its
// constructor (the adapters are in wiring.go); no setter is called on a built module.
func (s *Server) build(data *dataSources) (*Running, error) {
	catalog, err := i18n.New(s.cfg.I18n.Language)
	if err != nil {
		return nil, err
	}
	tel, err := s.newTelemetry(data)
	if err != nil {
		return nil, fmt.Errorf("build module ops: %w", err)
	}
	bus, err := s.newBus(tel, data)
	if err != nil {
		return nil, fmt.Errorf("build module event: %w", err)
	}
	if tel.Registerer() != nil {
		if err := wireMetrics(tel.Registerer(), bus); err != nil {
			return nil, fmt.Errorf("build module ops: %w", err)
		}
	}
	r := &Running{data: data, db: data.primary(), events: bus, telemetry: tel}
	// The ops module comes first, so its admin listener and span exporter stop last; the bus
	// next, so that subscriptions made while modules are built receive from the start and
	// workers can publish until they stop.
	r.modules = []app.Module{tel.Module(), eventModule(bus, s.cfg.Event)}
	if err := s.buildModules(r, catalog); err != nil {
		return nil, err
	}
	if err := register(r.engine, catalog, r.modules); err != nil {
		return nil, err
	}
	if err := r.engine.Validate(); err != nil {
		return nil, err
	}
	if r.handler, err = s.newHandler(r.engine, r.modules, data.ready); err != nil {
		return nil, err
	}
	return r, nil
}

// buildModules builds the modules after the bus, in boot order, into r: audit, security, the /api
// engine, storage, schema, integration (WithIntegration), monitor, backup, cron, push, approval
// (WithApproval), mcp, console, then the host's modules (WithModule). Its two typed parts are
// the platform (exists before any module) and the API (exists once the engine is built): each
// module's constructor names which of them it takes, and neither is changed after it is made.
func (s *Server) buildModules(r *Running, catalog *i18n.Catalog) error {
	p := app.Platform{Config: s.cfg, Logger: s.logger, Clock: s.clock, I18n: catalog, DB: r.db,
		DataSources: r.data.dbs, KV: r.data.kv, Events: r.events, Metrics: r.telemetry.Registerer()}
	api, err := s.buildCore(r, p, catalog)
	if err != nil {
		return err
	}
	sch, err := s.buildData(r, p, api)
	if err != nil {
		return err
	}
	if err := s.buildFront(r, p, api, sch); err != nil {
		return err
	}
	for _, build := range s.opts.modules {
		m, err := build(app.Deps{Platform: p, API: api})
		if err != nil {
			return fmt.Errorf("build host module: %w", err)
		}
		r.modules = append(r.modules, m)
	}
	return nil
}

// buildFailed names the module whose constructor failed.
func buildFailed(name string, err error) error { return fmt.Errorf("build module %s: %w", name, err) }

// buildCore builds the audit trail, security and the /api engine, and returns the API part the
// engine serves to every later module. Audit and security take only the platform: security is
// built before the engine, which takes its permission checker (the host's WithPermissionChecker
// wins). The host's checker is handed to security too, so the grant rule of security/user and
// security/session (security.Service.CheckGrant) asks the checker /api authorizes with.
// security/department has no operations when the host gave approval its own organisation.
func (s *Server) buildCore(r *Running, p app.Platform, catalog *i18n.Catalog) (app.API, error) {
	secOpts := s.opts.security
	if s.opts.permissions != nil {
		secOpts.Permissions = s.opts.permissions
	}
	// security/department lists the built-in departments; a host organisation for approval
	// names others, so the list would mislead the designer's picker (docs/approval.md).
	if a := s.opts.approval; a != nil && (a.Directory != nil || a.Assignees != nil || a.Departments != nil) {
		secOpts.HideDepartments = true
	}
	// The audit trail comes before security and the engine: it takes security's events and the
	// engine's audit records (wiring.go), and stops after every module that feeds it.
	var err error
	if r.audit, err = audit.New(p, audit.Options{}); err != nil {
		return app.API{}, buildFailed("audit", err)
	}
	r.modules = append(r.modules, r.audit.Module())
	if trail := securityAuditSink(r.audit); trail != nil {
		secOpts.Events = security.EventSinks(secOpts.Events, trail)
	}
	if r.security, err = security.New(p, secOpts); err != nil {
		return app.API{}, buildFailed("security", err)
	}
	r.modules = append(r.modules, r.security.Module())
	if r.engine, err = s.newEngine(catalog, r.events, r.telemetry, r.security.PermissionChecker(), r.audit.Sink()); err != nil {
		return app.API{}, err
	}
	return app.EngineAPI(r.engine), nil
}

// buildData builds the modules that keep data: storage, schema, integration (WithIntegration),
// monitor, backup and cron. It returns schema, whose table inspector approval takes.
func (s *Server) buildData(r *Running, p app.Platform, api app.API) (*schema.Service, error) {
	// Storage publishes its events on p.Events after checking that they are routed to a
	// transactional transport (New gave storage.EventPattern a route).
	var err error
	if r.storage, err = storage.New(p, api, s.opts.storage); err != nil {
		return nil, buildFailed("storage", err)
	}
	r.modules = append(r.modules, r.storage.Module())
	sch, err := schema.New(p, schema.Options{})
	if err != nil {
		return nil, buildFailed("schema", err)
	}
	r.modules = append(r.modules, sch.Module())

	// Integration joins when the host includes it; monitor reads its statistics.
	var itgStats monitor.StatsInspector
	if s.opts.integration != nil {
		if r.integration, err = integration.New(p, api, integrationOptions(*s.opts.integration, r.telemetry)); err != nil {
			return nil, buildFailed("integration", err)
		}
		r.modules = append(r.modules, r.integration.Module())
		itgStats = integrationStats(r.integration.Stats())
	}
	mon, err := monitor.New(p, monitor.Options{Streams: streamInspector(r.events, s.cfg.Event), Integration: itgStats,
		Dependencies: r.data.dependencies(s.cfg)})
	if err != nil {
		return nil, buildFailed("monitor", err)
	}
	r.modules = append(r.modules, mon.Module())

	// Backup archives the embedded database and the files it references (backup_wiring.go);
	// its scheduled job svc.backup joins cron's jobs.
	if r.backup, err = backup.New(p, api, backupOptions(s.cfg, r.storage, r)); err != nil {
		return nil, buildFailed("backup", err)
	}
	r.modules = append(r.modules, r.backup.Module())

	// Cron runs the host's jobs (WithCron). With svc.cron.store.enabled = false its resources
	// have no operations and it has no workers.
	if r.cron, err = cron.New(p, cronWithBackup(s.opts.cron, r.backup)); err != nil {
		return nil, buildFailed("cron", err)
	}
	r.modules = append(r.modules, r.cron.Module())
	return sch, nil
}

// buildFront builds the modules that reach users and agents: push, approval (WithApproval), mcp
// and the console.
func (s *Server) buildFront(r *Running, p app.Platform, api app.API, sch *schema.Service) error {
	// Push authenticates handshakes with the engine, binds connections to security's sessions
	// and token families and watches its revocations and user changes (wiring.go). Disabled, it
	// has no route and its Notifier drops pushes.
	var err error
	if r.push, err = push.New(p, api, pushOptions(r.security)); err != nil {
		return buildFailed("push", err)
	}
	r.modules = append(r.modules, r.push.Module())

	// Approval joins when the host includes it: its directory defaults to security's, its table
	// inspector to schema's, its Notifier to push's.
	if s.opts.approval != nil {
		if r.approval, err = approval.New(p, approvalOptions(*s.opts.approval, r.security.Directory(), sch, r.push)); err != nil {
			return buildFailed("approval", err)
		}
		r.modules = append(r.modules, r.approval.Module())
	}

	// MCP serves /mcp when svc.mcp.enabled: it lists and runs the /api operations it offers as
	// tools (svc.mcp.expose_operations) once every module has registered them.
	if r.mcp, err = mcp.New(p, api, r.engine, s.opts.mcp); err != nil {
		return buildFailed("mcp", err)
	}
	r.modules = append(r.modules, r.mcp.Module())

	// The console serves its embedded build at svc.console.path; it calls only /api.
	con, err := console.New(p, console.Options{})
	if err != nil {
		return buildFailed("console", err)
	}
	r.modules = append(r.modules, con.Module())
	return nil
}

// register merges each module's messages into the catalog (a key defined twice is an error) and
// registers its strategies and resources in the engine, in boot order.
func register(engine *rpc.Engine, catalog *i18n.Catalog, mods []app.Module) error {
	for _, m := range mods {
		if m.Messages != nil {
			if err := catalog.Add(m.Messages); err != nil {
				return fmt.Errorf("module %s: %w", m.Name, err)
			}
		}
		for _, st := range m.Strategies {
			if err := engine.RegisterStrategy(st); err != nil {
				return fmt.Errorf("module %s: %w", m.Name, err)
			}
		}
		if err := engine.Register(m.Resources...); err != nil {
			return fmt.Errorf("module %s: %w", m.Name, err)
		}
	}
	return nil
}

// newEngine creates the /api engine from svc.api and svc.app, with its permission checker. Audit records are published on the
// bus as svc.api.request.audit, queued for the audit trail (trail, nil when it is off) and handed to the host's sink
// (WithAuditSink) when set.
func (s *Server) newEngine(catalog *i18n.Catalog, bus *event.Bus, tel *ops.Telemetry, perms rpc.PermissionChecker, trail rpc.AuditSink) (*rpc.Engine, error) {
	encKey, err := decodeKey(s.cfg.API.BodyEncoding.Key)
	if err != nil {
		return nil, fmt.Errorf("svc.api.body_encoding.key: %w", err)
	}
	audit := rpc.AuditSinks(busAuditSink{bus: bus, logger: s.logger}, trail, s.opts.audit)
	return rpc.NewEngine(rpc.EngineConfig{
		BodyLimit:           int64(s.cfg.App.BodyLimit),
		BodyMemoryBudget:    int64(s.cfg.App.BodyMemoryBudget),
		BodyMemoryPerClient: int64(s.cfg.App.BodyMemoryPerClient),
		BodyMemoryWait:      s.cfg.App.BodyReadIdleTimeout,
		DefaultLimit:        rpc.Limit{Max: s.cfg.API.RateLimit.Max, Period: s.cfg.API.RateLimit.Period},
		BodyEncoding: rpc.BodyEncoding{
			Enabled:  s.cfg.API.BodyEncoding.Enabled,
			Encoding: string(s.cfg.API.BodyEncoding.Encoding),
			Key:      encKey,
		},
		Logger:          s.logger,
		Clock:           s.clock,
		Messages:        catalog,
		Audit:           audit,
		Permissions:     perms,
		DefaultStrategy: rpc.StrategyBearer,
		Observer:        tel.Observer(),
	})
}

// newHandler assembles the root HTTP handler: the outer middleware, /api and the modules' routes;
// ready is GET /readyz's check.
func (s *Server) newHandler(engine *rpc.Engine, mods []app.Module, ready func(context.Context) error) (http.Handler, error) {
	proxies, err := app.ParseProxies(s.cfg.App.TrustedProxies)
	if err != nil {
		return nil, err
	}
	return app.NewHandler(app.HandlerConfig{
		API:                 engine,
		Modules:             mods,
		Ready:               ready,
		BodyLimit:           int64(s.cfg.App.BodyLimit),
		BodyReadIdleTimeout: s.cfg.App.BodyReadIdleTimeout,
		BodyMinRate:         int64(s.cfg.App.BodyMinRate),
		BodyMinRateGrace:    s.cfg.App.BodyMinRateGrace,
		BodyMemoryRate:      int64(s.cfg.App.BodyMemoryRate),
		Proxies:             proxies,
		CORSEnabled:         s.cfg.CORS.Enabled,
		CORSOrigins:         s.cfg.CORS.AllowOrigins,
		Logger:              s.logger,
		AccessLog:           true,
		Clock:               s.clock,
		Errors:              engine.WriteError,
		Compress:            !s.cfg.API.BodyEncoding.Enabled,
	})
}
