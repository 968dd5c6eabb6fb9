package svc

import (
	"fmt"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/rpc"
)

// bootChain lists the default modules in boot order (spec §1). Integration and approval join only
// when a host includes them by an option; cron, push and mcp join here when they land.
func (s *Server) bootChain() []ModuleFunc {
	chain := []ModuleFunc{}
	return append(chain, s.opts.modules...)
}

// build creates the /api engine, builds every module of the boot chain and registers their
// resources, strategies and routes. It does no I/O.
func (s *Server) build() error {
	encKey, err := decodeKey(s.cfg.API.BodyEncoding.Key)
	if err != nil {
		return fmt.Errorf("svc.api.body_encoding.key: %w", err)
	}
	engine, err := rpc.NewEngine(rpc.EngineConfig{
		BodyLimit:    int64(s.cfg.App.BodyLimit),
		DefaultLimit: rpc.Limit{Max: s.cfg.API.RateLimit.Max, Period: s.cfg.API.RateLimit.Period},
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
	for _, build := range s.bootChain() {
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
	if s.opts.permissions != nil {
		engine.SetPermissionChecker(s.opts.permissions)
	}
	if err := engine.Validate(); err != nil {
		return err
	}
	proxies, err := app.ParseProxies(s.cfg.App.TrustedProxies)
	if err != nil {
		return err
	}
	handler, err := app.NewHandler(app.HandlerConfig{
		API:         engine,
		Modules:     mods,
		Ready:       s.ready,
		BodyLimit:   int64(s.cfg.App.BodyLimit),
		Proxies:     proxies,
		CORSEnabled: s.cfg.CORS.Enabled,
		CORSOrigins: s.cfg.CORS.AllowOrigins,
		Logger:      s.logger,
		AccessLog:   true,
		Clock:       s.clock,
	})
	if err != nil {
		return err
	}
	s.engine, s.modules, s.handler = engine, mods, handler
	return nil
}
