package ops

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/event"
)

// Descriptions of the event bus series. The type label is the event type: names the
// application and the modules declare in code, never data.
var (
	busPublished     = busDesc("svc_event_published_total", "Events accepted by the bus, by type.", "type")
	busPublishErrors = busDesc("svc_event_publish_errors_total", "Failed transactional publishes, by type.", "type")
	busHandled       = busDesc("svc_event_handled_total", "Successful deliveries to handlers, by type (svc.event.middleware.metrics).", "type")
	busHandlerErrors = busDesc("svc_event_handler_errors_total", "Failed deliveries to handlers, by type (svc.event.middleware.metrics).", "type")
	busDropped       = busDesc("svc_event_dropped_total", "Events a drop_oldest memory queue discarded.")
	busAsyncFallback = busDesc("svc_event_async_fallbacks_total", "Async publishes run synchronously because the queue was full.")
	busRelayed       = busDesc("svc_event_outbox_relayed_total", "Outbox rows forwarded to their sink.")
	busRelayFailures = busDesc("svc_event_outbox_relay_failures_total", "Failed outbox forwards.")
	busDeadLettered  = busDesc("svc_event_dead_lettered_total", "Outbox rows forwarded to svc-dlq.<type>.")
	busRedelivered   = busDesc("svc_event_redelivered_total", "Stream entries the reaper claimed and delivered again.")
	streamLag        = busDesc("svc_event_stream_lag", "Stream entries not yet delivered to a consumer group.", "stream", "group")
	streamPending    = busDesc("svc_event_stream_pending", "Stream entries delivered to a group and not acknowledged.", "stream", "group")
	outboxRows       = busDesc("svc_event_outbox_rows", "Rows of sys_event_outbox by status (pending, processing, completed, failed, dead).", "status")
)

func busDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// BusCollector reports the bus's own counters (event.Metrics) and, with the kvstore_stream
// transport, the lag and pending count of each consumer group, read at scrape time.
func BusCollector(bus *event.Bus) prometheus.Collector {
	return app.NewCollector(func(ctx context.Context, ch chan<- prometheus.Metric) {
		snap := bus.Metrics().Snapshot()
		for typ, c := range snap.Types {
			counter(ch, busPublished, c.Published, typ)
			counter(ch, busPublishErrors, c.PublishErrors, typ)
			counter(ch, busHandled, c.Handled, typ)
			counter(ch, busHandlerErrors, c.HandlerErrors, typ)
		}
		counter(ch, busDropped, snap.Dropped)
		counter(ch, busAsyncFallback, snap.AsyncFallbacks)
		counter(ch, busRelayed, snap.Relayed)
		counter(ch, busRelayFailures, snap.RelayFailures)
		counter(ch, busDeadLettered, snap.DeadLettered)
		counter(ch, busRedelivered, snap.Redelivered)
		report, err := bus.InspectStreams(ctx)
		if err != nil {
			return
		}
		for _, s := range report.Streams {
			for _, g := range s.Groups {
				gauge(ch, streamLag, g.Lag, s.Stream, g.Name)
				gauge(ch, streamPending, g.Pending, s.Stream, g.Name)
			}
		}
	}, busPublished, busPublishErrors, busHandled, busHandlerErrors, busDropped, busAsyncFallback,
		busRelayed, busRelayFailures, busDeadLettered, busRedelivered, streamLag, streamPending)
}

// OutboxCollector reports sys_event_outbox's row count per status with one GROUP BY query per
// scrape; nothing when the outbox transport is off.
func OutboxCollector(bus *event.Bus) prometheus.Collector {
	return app.NewCollector(func(ctx context.Context, ch chan<- prometheus.Metric) {
		counts, ok, err := bus.OutboxCounts(ctx)
		if !ok || err != nil {
			return
		}
		for _, st := range []string{event.OutboxPending, event.OutboxProcessing, event.OutboxCompleted, event.OutboxFailed, event.OutboxDead} {
			gauge(ch, outboxRows, counts[st], st)
		}
	}, outboxRows)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v int64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v int64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
}
