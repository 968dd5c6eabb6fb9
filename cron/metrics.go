package cron

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the cron store's Prometheus series (issue #19), registered on app.Platform.Metrics.
// Labels: job (the registered job names) and status (the run statuses); both bounded.
type metrics struct {
	runs *prometheus.CounterVec
	lag  prometheus.Histogram
}

// lagBuckets span a poll interval's delay (seconds) to a node that was down for an hour.
var lagBuckets = []float64{.1, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}

// newMetrics registers the series on reg; a nil reg keeps them unregistered.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_cron_runs_total",
			Help: "Cron runs by job and final status (succeeded, failed, canceled, abandoned) on this node.",
		}, []string{"job", "status"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "svc_cron_fire_lag_seconds",
			Help:    "Delay from a run's logical fire time to its claim by this node.",
			Buckets: lagBuckets,
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.runs, m.lag} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// fired records the lag of a run this node claimed.
func (m *metrics) fired(r *Run) {
	m.lag.Observe(max(r.ClaimedAt.Sub(r.ScheduledAt), 0).Seconds())
}

// ended counts a run's journaled final status.
func (m *metrics) ended(job string, status Status) {
	m.runs.WithLabelValues(job, string(status)).Inc()
}
