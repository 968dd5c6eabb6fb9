package audit

import "github.com/prometheus/client_golang/prometheus"

// metrics are the trail's Prometheus series (registered on app.Platform.Metrics, issue #19). The
// reason label is bounded: "queue_full" or "store_error".
type metrics struct {
	written prometheus.Counter
	dropped *prometheus.CounterVec
}

// Reasons a record is dropped.
const (
	dropQueueFull  = "queue_full"
	dropStoreError = "store_error"
)

// newMetrics returns the series, registered on reg unless it is nil (they still count, so the
// module reads them the same way either way).
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		written: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_audit_records_written_total",
			Help: "Audit records this node wrote to sys_audit_record.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_audit_records_dropped_total",
			Help: "Audit records this node dropped: queue_full (the writer's queue was full) or store_error (the insert failed).",
		}, []string{"reason"}),
	}
	// Both label values exist from the start, so a dashboard sees 0 rather than no series.
	m.dropped.WithLabelValues(dropQueueFull)
	m.dropped.WithLabelValues(dropStoreError)
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.written, m.dropped} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
