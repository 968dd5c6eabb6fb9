package approval

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/svc-framework/svc/app"
)

// registerMetrics registers on reg (app.Deps.Metrics) the collector of Stats, read at scrape
// time: live tasks, open instances and unapplied business projections by status, all tenants. A nil reg (metrics off)
// registers nothing, so no scrape queries the tables.
func (s *Service) registerMetrics(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	tasks := prometheus.NewDesc("svc_approval_tasks", "Live approval tasks by status (pending, waiting), all tenants.", []string{"status"}, nil)
	instances := prometheus.NewDesc("svc_approval_instances", "Open approval instances by status (running, returned), all tenants.", []string{"status"}, nil)
	projections := prometheus.NewDesc("svc_approval_business_projections",
		"Business projections not written to the host's record yet by status (pending, processing, failed), all tenants.", []string{"status"}, nil)
	return reg.Register(app.NewCollector(func(ctx context.Context, ch chan<- prometheus.Metric) {
		stats, err := s.Stats(ctx)
		if err != nil {
			return // left out of this scrape: absent, never a guessed zero
		}
		for status, n := range stats.Tasks {
			ch <- prometheus.MustNewConstMetric(tasks, prometheus.GaugeValue, float64(n), status)
		}
		for status, n := range stats.Instances {
			ch <- prometheus.MustNewConstMetric(instances, prometheus.GaugeValue, float64(n), status)
		}
		for status, n := range stats.Projections {
			ch <- prometheus.MustNewConstMetric(projections, prometheus.GaugeValue, float64(n), status)
		}
	}, tasks, instances, projections))
}
