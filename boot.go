package svc

import (
	"fmt"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/monitor"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/schema"
	"github.com/svc-framework/svc/security"
	"github.com/svc-framework/svc/storage"
)

// bootChain lists the default modules in boot order (spec §1), then the host's modules.
// Integration and approval join only when a host includes them by an option; cron, push and mcp
// join here when they land.
func (s *Server) bootChain(engine *rpc.Engine) []ModuleFunc {
	chain := []ModuleFunc{
		func(d app.Deps) (app.Module, error) {
			m, sec, err := security.Build(d, s.opts.security)
			s.security = sec
			return m, err
		},
		func(d app.Deps) (app.Module, error) {
			o := s.opts.storage
			o.Auth, o.Errors = pick[storage.Authenticator](o.Auth, engine), pick[storage.ErrorWriter](o.Errors, engine)
			o.Permissions = pick[storage.PermissionChecker](o.Permissions, engine)
			m, st, err := storage.Build(d, o)
			s.storage = st
			return m, err
		},
		schema.Build,
		func(d app.Deps) (app.Module, error) { return monitor.Build(d, s.opts.monitor) },
	}
	return append(chain, s.opts.modules...)
}

// pick returns override unless it is nil.
func pick[T any](override, def T) T {
	if any(override) == nil {
		return def
	}
	return override
}

// build creates the /api engine, builds every module of the boot chain and registers their
// resources, strategies and routes. It does no I/O.
func (s *Server) build() error {
	encKey, err := decodeKey(s.cfg.API.BodyEncoding.Key)
	if err != nil {
		return fmt.Errorf("svc.api.body_encoding.key: %w", err)
	}
	engine, err := rpc.NewEngine(rpc.EngineConfig{
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
		Messages:        s.catalog,
		Audit:           s.opts.audit,
		DefaultStrategy: rpc.StrategyBearer,
	})
	if err != nil {
		return err
	}
	deps := app.Deps{
		Config:      s.cfg,
		Logger:      s.logger,
		Clock:       s.clock,
		I18n:        s.catalog,
		DB:          s.DB(),
		DataSources: s.dbs,
		KV:          s.kv,
	}
	var mods []app.Module
	for _, build := range s.bootChain(engine) {
		m, err := build(deps)
		if err != nil {
			return fmt.Errorf("build module: %w", err)
		}
		mods = append(mods, m)
	}
	if len(s.opts.resources) > 0 {
		mods = append(mods, app.Module{Name: "host", Resources: s.opts.resources, Strategies: s.opts.strategies})
	} else if len(s.opts.strategies) > 0 {
		mods = append(mods, app.Module{Name: "host", Strategies: s.opts.strategies})
	}
	for _, m := range mods {
		for _, st := range m.Strategies {
			if err := engine.RegisterStrategy(st); err != nil {
				return fmt.Errorf("module %s: %w", m.Name, err)
			}
		}
		if err := engine.Register(m.Resources...); err != nil {
			return fmt.Errorf("module %s: %w", m.Name, err)
		}
	}
	switch {
	case s.opts.permissions != nil:
		engine.SetPermissionChecker(s.opts.permissions)
	case s.security != nil:
		engine.SetPermissionChecker(s.security.PermissionChecker())
	}
	if err := engine.Validate(); err != nil {
		return err
	}
	proxies, err := app.ParseProxies(s.cfg.App.TrustedProxies)
	if err != nil {
		return err
	}
	handler, err := app.NewHandler(app.HandlerConfig{
		API:                 engine,
		Modules:             mods,
		Ready:               s.ready,
		BodyLimit:           int64(s.cfg.App.BodyLimit),
		BodyReadIdleTimeout: s.cfg.App.BodyReadIdleTimeout,
		Proxies:             proxies,
		CORSEnabled:         s.cfg.CORS.Enabled,
		CORSOrigins:         s.cfg.CORS.AllowOrigins,
		Logger:              s.logger,
		AccessLog:           true,
		Clock:               s.clock,
		Errors:              engine.WriteError,
		Compress:            !s.cfg.API.BodyEncoding.Enabled,
	})
	if err != nil {
		return err
	}
	s.engine, s.modules, s.handler = engine, mods, handler
	return nil
}
