package storage

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/event"
)

// metricsGroup is the consumer group of the counting subscriptions: on an at-least-once route
// each event is counted once across the nodes (sum the series over instances). The name
// predates the module owning its metrics and is kept so a stream's group keeps its position.
const metricsGroup = "svc-ops-metrics"

// registerMetrics registers the storage series on reg (app.Platform.Metrics): Stats read at scrape
// time, and counters of the module's own events, which are delivered after their transaction
// commits, so a rolled-back upload is not counted. A nil reg (metrics off) registers and
// subscribes to nothing; a nil bus leaves the event counters at zero.
func registerMetrics(reg prometheus.Registerer, bus app.EventBus, s *Service) error {
	if reg == nil {
		return nil
	}
	uploads := prometheus.NewCounter(prometheus.CounterOpts{Name: "svc_storage_uploads_total",
		Help: "Files registered by complete_upload (or the sweeper's recovery) on this node."})
	bytes := prometheus.NewCounter(prometheus.CounterOpts{Name: "svc_storage_upload_bytes_total",
		Help: "Bytes of the files counted by svc_storage_uploads_total."})
	dead := prometheus.NewCounter(prometheus.CounterOpts{Name: "svc_storage_delete_dead_letters_total",
		Help: "Objects the delete worker gave up on after svc.storage.delete_max_attempts."})
	for _, c := range []prometheus.Collector{statsCollector(s), uploads, bytes, dead} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	if bus == nil {
		return nil
	}
	if _, err := event.SubscribeTyped(bus, func(_ context.Context, _ *event.Envelope, f FileUploaded) error {
		uploads.Inc()
		bytes.Add(float64(max(f.Size, 0)))
		return nil
	}, event.WithGroup(metricsGroup)); err != nil {
		return err
	}
	_, err := event.SubscribeTyped(bus, func(context.Context, *event.Envelope, DeleteDeadLetter) error {
		dead.Inc()
		return nil
	}, event.WithGroup(metricsGroup))
	return err
}

// statsCollector reports Stats: active upload claims and the delete-queue depth.
func statsCollector(s *Service) prometheus.Collector {
	claims := prometheus.NewDesc("svc_storage_active_claims", "Upload claims pending and not expired.", nil, nil)
	depth := prometheus.NewDesc("svc_storage_delete_queue_depth", "Objects waiting in the delete queue (sys_storage_pending_delete).", nil, nil)
	return app.NewCollector(func(ctx context.Context, ch chan<- prometheus.Metric) {
		stats, err := s.Stats(ctx)
		if err != nil {
			return // left out of this scrape: absent, never a guessed zero
		}
		ch <- prometheus.MustNewConstMetric(claims, prometheus.GaugeValue, float64(stats.ActiveClaims))
		ch <- prometheus.MustNewConstMetric(depth, prometheus.GaugeValue, float64(stats.DeleteQueueDepth))
	}, claims, depth)
}
