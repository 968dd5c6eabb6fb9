package svc

import (
	"context"

	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/event/kvstream"
	"github.com/svc-framework/svc/event/memory"
	"github.com/svc-framework/svc/event/outbox"
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

// newBus builds the event bus of svc.event over the primary data source and the kv store. The
// server's svc.event already holds the transactional routes the modules need (New).
func (s *Server) newBus(tel *ops.Telemetry, data *dataSources) (*event.Bus, error) {
	return event.New(s.cfg.Event, event.Deps{
		DB:         data.primary(),
		Redis:      data.kv,
		Logger:     s.logger,
		Clock:      s.clock,
		AppName:    s.cfg.App.Name,
		RequestID:  func(ctx context.Context) string { return rpc.RequestInfoFrom(ctx).ID },
		Tracer:     tel.TracerProvider(),
		Transports: eventTransports(),
	})
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
		Resources:   eventResources(bus),
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
