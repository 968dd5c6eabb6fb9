package svc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
	"github.com/svc-framework/svc/internal/testservice"
)

// TestEventModuleWorkers (issue #32 item 3): the bus's background jobs — outbox relay and
// cleanup (and on PostgreSQL its listener and announcer), inbox cleanup, stream reaper and
// group sweep — are the event module's workers, run by app.Workers like every module's (panic
// recovery, logging, shutdown), not goroutines of their own; the transports come from the
// factories the root passes (item 2).
func TestEventModuleWorkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind config.DBKind
		want []string
	}{
		{config.SQLite, []string{"event.inbox.cleanup", "event.kvstore_stream.reaper", "event.kvstore_stream.group_sweep",
			"event.outbox.relay", "event.outbox.cleanup"}},
		{config.Postgres, []string{"event.inbox.cleanup", "event.kvstore_stream.reaper", "event.kvstore_stream.group_sweep",
			"event.outbox.relay", "event.outbox.listener", "event.outbox.announcer", "event.outbox.cleanup"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			t.Parallel()
			cfg := config.Default().Event
			cfg.Middleware.Inbox = true
			cfg.Transports.Outbox.Enabled = true
			cfg.Transports.KVStoreStream.Enabled = true
			cfg.Transports.KVStoreStream.IdleGroupRetention = 1
			rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled: building does no I/O
			t.Cleanup(func() { _ = rdb.Close() })
			d := testservice.OpenDB(t, testservice.DataSource(t, tt.kind))
			bus, err := event.New(cfg, event.Deps{DB: d, Redis: rdb, Transports: eventTransports()})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range app.CollectWorkers([]app.Module{eventModule(bus, cfg)}) {
				if w.Run == nil {
					t.Errorf("worker %s has no body", w.Name)
				}
				got = append(got, w.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("event module workers (-want +got):\n%s", diff)
			}
		})
	}
}
