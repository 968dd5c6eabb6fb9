package storage

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/event"
)

// handlerBus is an app.EventBus that keeps each subscription's handler, so a test can deliver
// an event to it without a bus.
type handlerBus struct {
	handlers map[string]event.Handler
}

func (b *handlerBus) Publish(context.Context, event.Event, ...event.PublishOption) error { return nil }

func (b *handlerBus) PublishBatch(context.Context, []event.Event, ...event.PublishOption) error {
	return nil
}

func (b *handlerBus) Subscribe(eventType string, h event.Handler, _ ...event.SubscribeOption) (event.Unsubscribe, error) {
	b.handlers[eventType] = h
	return func() {}, nil
}

func (b *handlerBus) RequireTransactional(string) error { return nil }

// TestMetrics: the module registers its own series on Deps.Metrics (issue #32 item 7) with the
// names and help texts docs/operations.md lists, counts its committed events, and reads Stats at
// scrape time; with Deps.Metrics nil it subscribes to nothing.
func TestMetrics(t *testing.T) {
	for _, tc := range []struct {
		name string
		reg  *prometheus.Registry
	}{{"off", nil}, {"on", prometheus.NewRegistry()}} {
		t.Run(tc.name, func(t *testing.T) {
			bus := &handlerBus{handlers: map[string]event.Handler{}}
			deps := app.Platform{Config: config.Default(), DB: migrated(t, config.SQLite), Events: bus,
				Logger: slog.New(slog.DiscardHandler)}
			if tc.reg != nil {
				deps.Metrics = tc.reg
			}
			if _, err := New(deps, app.API{}, Options{}); err != nil {
				t.Fatalf("New: %v", err)
			}
			if tc.reg == nil {
				if len(bus.handlers) != 0 {
					t.Fatalf("metrics off subscribed to %d event types, want none", len(bus.handlers))
				}
				return
			}
			ctx := context.Background()
			deliver := func(evt event.Event) {
				h := bus.handlers[evt.EventType()]
				if h == nil {
					t.Fatalf("no subscription to %s", evt.EventType())
				}
				if err := h(ctx, &event.Envelope{Type: evt.EventType(), Payload: evt}); err != nil {
					t.Fatal(err)
				}
			}
			deliver(FileUploaded{FileKey: "a", Size: 10})
			deliver(FileUploaded{FileKey: "b", Size: 5})
			deliver(DeleteDeadLetter{FileKey: "c"})
			const want = `# HELP svc_storage_active_claims Upload claims pending and not expired.
# TYPE svc_storage_active_claims gauge
svc_storage_active_claims 0
# HELP svc_storage_delete_dead_letters_total Objects the delete worker gave up on after svc.storage.delete_max_attempts.
# TYPE svc_storage_delete_dead_letters_total counter
svc_storage_delete_dead_letters_total 1
# HELP svc_storage_delete_queue_depth Objects waiting in the delete queue (sys_storage_pending_delete).
# TYPE svc_storage_delete_queue_depth gauge
svc_storage_delete_queue_depth 0
# HELP svc_storage_upload_bytes_total Bytes of the files counted by svc_storage_uploads_total.
# TYPE svc_storage_upload_bytes_total counter
svc_storage_upload_bytes_total 15
# HELP svc_storage_uploads_total Files registered by complete_upload (or the sweeper's recovery) on this node.
# TYPE svc_storage_uploads_total counter
svc_storage_uploads_total 2
`
			if err := testutil.GatherAndCompare(tc.reg, strings.NewReader(want)); err != nil {
				t.Error(err)
			}
		})
	}
}
