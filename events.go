package svc

import (
	"context"
	"log/slog"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/event/kvstream"
	"github.com/svc-framework/svc/event/memory"
	"github.com/svc-framework/svc/event/outbox"
	"github.com/svc-framework/svc/monitor"
	"github.com/svc-framework/svc/ops"
	"github.com/svc-framework/svc/rpc"
)

// eventTransports are the factories of the bus's four transports; the bus builds those
// svc.event enables.
func eventTransports() map[string]event.Factory {
	return map[string]event.Factory{
		config.TransportMemory:        memory.New,
		config.TransportTxMemory:      memory.NewTx,
		config.TransportOutbox:        outbox.New,
		config.TransportKVStoreStream: kvstream.New,
	}
}

// newBus builds the event bus of svc.event over the primary data source and the kv store, with
// the effective configuration cfg (config.Event.Effective: storage events get a transactional
// route when no rule covers them).
func (s *Server) newBus(cfg config.Event, tel *ops.Telemetry) (*event.Bus, error) {
	return event.New(cfg, event.Deps{
		DB:         s.DB(),
		Redis:      s.kv,
		Logger:     s.logger,
		Clock:      s.clock,
		AppName:    s.cfg.App.Name,
		RequestID:  func(ctx context.Context) string { return rpc.RequestInfoFrom(ctx).ID },
		Tracer:     tel.TracerProvider(),
		Transports: eventTransports(),
	})
}

// busAuditSink is the /api engine's audit sink onto the bus: it publishes each record as
// rpc.EventRequestAudit (its rpc.AuditEvent) asynchronously. It never fails the request: a full
// async queue makes the bus publish synchronously, and a publish error is only logged. It lives
// here, not in rpc, so that the /api engine depends on no bus, database or Redis.
type busAuditSink struct {
	bus    event.Publisher
	logger *slog.Logger
}

var _ rpc.AuditSink = busAuditSink{}

// Audit implements rpc.AuditSink.
func (b busAuditSink) Audit(ctx context.Context, rec rpc.AuditRecord) {
	err := b.bus.Publish(ctx, event.Named{Type: rpc.EventRequestAudit, Payload: rec.Event()}, event.Async())
	if err != nil {
		b.logger.ErrorContext(ctx, "svc: publish audit event", slog.String("request_id", rec.RequestID), slog.Any("err", err))
	}
}

// eventModule is the bus (built from cfg) as the first module of the boot chain: its migrations (the outbox and
// inbox tables) run with the others — at startup when the outbox or the inbox middleware needs
// them, always under `svc migrate` — and it starts before every other module and stops after
// them, so subscriptions made while building modules receive from the start and workers can
// publish until they stop. Its workers are the bus's (outbox relay and cleanup, inbox cleanup,
// stream reaper and sweeper), run like every module's by app.Workers.
func eventModule(bus *event.Bus, cfg config.Event) app.Module {
	return app.Module{
		Name:        "event",
		Migrations:  event.Migrations(),
		AutoMigrate: cfg.Transports.Outbox.Enabled || cfg.Middleware.Inbox,
		Workers:     appWorkers(bus.Workers()),
		Start:       bus.Start,
		Stop:        bus.Stop,
	}
}

// appWorkers are the bus's worker specs as the server's.
func appWorkers(ws []event.Worker) []app.Worker {
	out := make([]app.Worker, len(ws))
	for i, w := range ws {
		out[i] = app.Worker{Name: w.Name, Interval: w.Interval, Run: w.Run}
	}
	return out
}

// streamInspector is the bus's InspectStreams in the monitor's types (wire-runtime §2.8), or nil
// when the kvstore_stream transport is off, so get_event_streams answers {enabled:false}.
func streamInspector(bus *event.Bus, cfg config.Event) monitor.StreamInspector {
	if !cfg.Transports.KVStoreStream.Enabled {
		return nil
	}
	return monitor.StreamInspectorFunc(func(ctx context.Context) ([]monitor.StreamInfo, error) {
		report, err := bus.InspectStreams(ctx)
		if err != nil {
			return nil, err
		}
		streams := make([]monitor.StreamInfo, 0, len(report.Streams))
		for _, st := range report.Streams {
			info := monitor.StreamInfo{Stream: st.Stream, Length: st.Length, Groups: make([]monitor.StreamGroupInfo, 0, len(st.Groups))}
			for _, g := range st.Groups {
				info.Groups = append(info.Groups, monitor.StreamGroupInfo{Name: g.Name, Consumers: g.Consumers,
					Pending: g.Pending, Lag: g.Lag, LastDeliveredID: g.LastDeliveredID})
			}
			streams = append(streams, info)
		}
		return streams, nil
	})
}
