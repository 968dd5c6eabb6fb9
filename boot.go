package svc

import (
	"fmt"
	"net/http"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval"
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

// build is the boot chain (spec §1, ARCHITECTURE.md): it creates the message catalog and the
// /api engine, constructs each default module as a typed value in boot order, writes the wiring
// between modules as plain statements, then appends the host's modules and registers everything
// in the engine and the HTTP handler. It does no I/O.
//
// The order is the order of the statements: the event bus first (modules subscribe while they
// are built, and its module starts before theirs and stops after them), then security (its
// strategies and permission checker guard everything after it), then storage, schema,
// monitor, cron, push and mcp, then integration when the host includes it (WithIntegration),
// then approval when the host includes it (WithApproval), then the host modules.
func (s *Server) build() error {
	catalog, err := i18n.New(s.cfg.I18n.Language)
	if err != nil {
		return err
	}
	tel, err := s.newTelemetry()
	if err != nil {
		return fmt.Errorf("build module ops: %w", err)
	}
	eventCfg := s.cfg.Event.Effective()
	bus, err := s.newBus(eventCfg, tel)
	if err != nil {
		return fmt.Errorf("build module event: %w", err)
	}
	engine, err := s.newEngine(catalog, bus, tel)
	if err != nil {
		return err
	}
	deps := app.Deps{
		Config:      s.cfg,
		Logger:      s.logger,
		Clock:       s.clock,
		I18n:        catalog,
		DB:          s.DB(),
		DataSources: s.dbs,
		KV:          s.kv,
		Events:      bus,
		Auth:        engine,
		Permissions: engine,
		Errors:      engine,
		Bodies:      engine,
		Metrics:     tel.Registerer(),
	}

	sec, err := security.New(deps, s.opts.security)
	if err != nil {
		return fmt.Errorf("build module security: %w", err)
	}

	// Storage takes the engine from deps as its download authenticator, error renderer and the
	// permission checker of its default ACL, and publishes its events on deps.Events after
	// checking that they are routed to a transactional transport.
	st, err := storage.New(deps, s.opts.storage)
	if err != nil {
		return fmt.Errorf("build module storage: %w", err)
	}
	sch, err := schema.New(deps, schema.Options{})
	if err != nil {
		return fmt.Errorf("build module schema: %w", err)
	}
	// Integration joins when the host includes it (WithIntegration); monitor reads its
	// statistics through the inspector hook, converted here since modules do not import each
	// other. Its outbound calls go through the ops transport (client spans, traceparent) unless
	// the host wrapped them itself.
	var itg *integration.Service
	var itgStats monitor.StatsInspector
	if s.opts.integration != nil {
		o := *s.opts.integration
		if o.WrapTransport == nil {
			tp := tel.TracerProvider()
			o.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return ops.Transport(tp, rt) }
		}
		if itg, err = integration.New(deps, o); err != nil {
			return fmt.Errorf("build module integration: %w", err)
		}
		itgStats = integrationStats(itg.Stats())
	}
	// Approval joins when the host includes it (WithApproval): its directory defaults to the
	// built-in user store's departments and superiors, its business-binding check to the schema
	// module's inspector; it checks that approval.* events route to a transactional transport.
	var apv *approval.Service
	if s.opts.approval != nil {
		o := approvalOptions(*s.opts.approval, sec.Directory(), sch)
		if apv, err = approval.New(deps, o); err != nil {
			return fmt.Errorf("build module approval: %w", err)
		}
	}
	mon, err := monitor.New(deps, monitor.Options{
		Streams:      streamInspector(bus, eventCfg),
		Integration:  itgStats,
		Dependencies: s.dependencies(),
	})
	if err != nil {
		return fmt.Errorf("build module monitor: %w", err)
	}

	// Cron runs the host's jobs (WithCron) and publishes its run events on deps.Events. With
	// svc.cron.store.enabled = false its resources have no operations and it has no workers.
	crn, err := cron.New(deps, s.opts.cron)
	if err != nil {
		return fmt.Errorf("build module cron: %w", err)
	}

	// Push authenticates handshakes with the engine (deps.Auth), binds connections to the
	// security module's sessions and token families (pushBinder) and is kicked by its
	// revocations (wirePush). Disabled, it has no route and its Notifier drops pushes.
	psh, err := push.New(deps, push.Options{Binder: newPushBinder(sec)})
	if err != nil {
		return fmt.Errorf("build module push: %w", err)
	}
	wirePush(sec, psh)
	if apv != nil && s.opts.approval.Notifier == nil {
		apv.SetNotifier(psh) // approval.task.created, urged, deadline_warning and cc.notified reach open tabs
	}

	// MCP serves /mcp when svc.mcp.enabled: the engine lists and runs the /api operations it
	// offers as tools (svc.mcp.expose_operations) once every module has registered them.
	mc, err := mcp.New(deps, engine, s.opts.mcp)
	if err != nil {
		return fmt.Errorf("build module mcp: %w", err)
	}

	if deps.Metrics != nil {
		if err := wireMetrics(deps.Metrics, bus); err != nil {
			return fmt.Errorf("build module ops: %w", err)
		}
	}

	// The console serves its embedded build at svc.console.path; it calls only /api.
	con, err := console.New(deps, console.Options{})
	if err != nil {
		return fmt.Errorf("build module console: %w", err)
	}

	// The ops module comes first, so its admin listener and span exporter stop last.
	mods := []app.Module{tel.Module(), eventModule(bus, eventCfg), sec.Module(), st.Module(), sch.Module(), mon.Module(), crn.Module(), psh.Module(), mc.Module(),
		con.Module()}
	if itg != nil {
		mods = append(mods, itg.Module())
	}
	if apv != nil {
		mods = append(mods, apv.Module())
	}
	for _, build := range s.opts.modules {
		m, err := build(deps)
		if err != nil {
			return fmt.Errorf("build host module: %w", err)
		}
		mods = append(mods, m)
	}
	if err := register(engine, catalog, mods); err != nil {
		return err
	}
	// The host's permission checker wins over the security module's role checker.
	perms := s.opts.permissions
	if perms == nil {
		perms = sec.PermissionChecker()
	}
	engine.SetPermissionChecker(perms)
	if err := engine.Validate(); err != nil {
		return err
	}
	handler, err := s.newHandler(engine, mods)
	if err != nil {
		return err
	}
	s.catalog, s.engine, s.modules, s.handler = catalog, engine, mods, handler
	s.security, s.storage, s.cron, s.mcp, s.events, s.telemetry, s.push = sec, st, crn, mc, bus, tel, psh
	s.approval = apv
	s.integration = itg
	return nil
}

// integrationStats adapts the integration module's counters to the monitor's inspector.
func integrationStats(st *integration.Stats) monitor.StatsInspector {
	return monitor.StatsInspectorFunc(func() []monitor.InvocationStats {
		in := st.InvocationStats()
		out := make([]monitor.InvocationStats, len(in))
		for i, e := range in {
			out[i] = monitor.InvocationStats{System: e.System, Contract: e.Contract, Direction: e.Direction,
				Calls: e.Calls, Successes: e.Successes, Failures: e.Failures, AvgDurationMs: e.AvgDurationMs,
				MaxDurationMs: e.MaxDurationMs, LastError: e.LastError, LastErrorAt: e.LastErrorAt}
		}
		return out
	})
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

// newEngine creates the /api engine from svc.api and svc.app. Audit records are published on the
// bus as svc.api.request.audit and also handed to the host's sink (WithAuditSink) when set.
func (s *Server) newEngine(catalog *i18n.Catalog, bus *event.Bus, tel *ops.Telemetry) (*rpc.Engine, error) {
	encKey, err := decodeKey(s.cfg.API.BodyEncoding.Key)
	if err != nil {
		return nil, fmt.Errorf("svc.api.body_encoding.key: %w", err)
	}
	audit := rpc.AuditSinks(busAuditSink{bus: bus, logger: s.logger}, s.opts.audit)
	return rpc.NewEngine(rpc.EngineConfig{
		BodyLimit:        int64(s.cfg.App.BodyLimit),
		BodyMemoryBudget: int64(s.cfg.App.BodyMemoryBudget),
		BodyMemoryWait:   s.cfg.App.BodyReadIdleTimeout,
		DefaultLimit:     rpc.Limit{Max: s.cfg.API.RateLimit.Max, Period: s.cfg.API.RateLimit.Period},
		BodyEncoding: rpc.BodyEncoding{
			Enabled:  s.cfg.API.BodyEncoding.Enabled,
			Encoding: string(s.cfg.API.BodyEncoding.Encoding),
			Key:      encKey,
		},
		Logger:          s.logger,
		Clock:           s.clock,
		Messages:        catalog,
		Audit:           audit,
		DefaultStrategy: rpc.StrategyBearer,
		Observer:        tel.Observer(),
	})
}

// newHandler assembles the root HTTP handler: the outer middleware, /api and the modules' routes.
func (s *Server) newHandler(engine *rpc.Engine, mods []app.Module) (http.Handler, error) {
	proxies, err := app.ParseProxies(s.cfg.App.TrustedProxies)
	if err != nil {
		return nil, err
	}
	return app.NewHandler(app.HandlerConfig{
		API:                 engine,
		Modules:             mods,
		Ready:               s.ready,
		BodyLimit:           int64(s.cfg.App.BodyLimit),
		BodyReadIdleTimeout: s.cfg.App.BodyReadIdleTimeout,
		BodyMinRate:         int64(s.cfg.App.BodyMinRate),
		BodyMinRateGrace:    s.cfg.App.BodyMinRateGrace,
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
