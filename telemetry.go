package svc

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/ops"
)

// newTelemetry builds the operations module (svc.metrics, svc.tracing, svc.pprof) and, with
// tracing on, adds the span hooks to every data source and the kv store client. It runs first
// in build: the bus, the engine and every module take their metrics registerer and tracer from
// it.
func (s *Server) newTelemetry(data *dataSources) (*ops.Telemetry, error) {
	tel, err := ops.New(s.cfg, s.logger, s.opts.telemetry)
	if err != nil {
		return nil, err
	}
	if tp := tel.TracerProvider(); tp != nil {
		for name, d := range data.dbs {
			d.UseQueryHook(ops.NewDBHook(tp, d.SystemName(), name))
		}
		if data.kv != nil {
			data.kv.AddHook(ops.NewRedisHook(tp))
		}
	}
	return tel, nil
}

// wireMetrics registers the collectors of the bus, which is not a module with Deps: its
// counters and stream lag and the outbox's row counts, read at scrape time. Every module
// registers its own series on app.Platform.Metrics (its metrics.go); the process collectors and the
// engine's come with ops.New.
func wireMetrics(reg prometheus.Registerer, bus *event.Bus) error {
	for _, c := range []prometheus.Collector{ops.BusCollector(bus), ops.OutboxCollector(bus)} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
