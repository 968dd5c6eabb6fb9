package integration

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/svc-framework/svc/app"
)

// registerMetrics registers on reg (app.Deps.Metrics) the invocation counters Stats keeps since
// start, read at scrape time so an invocation costs nothing more: calls by outcome (failure
// "none" for successes, else the failure kind) and their summed duration, per system, contract
// and direction. Inbound deliveries refused before a contract was resolved count under contract
// "". A nil reg (metrics off) registers nothing.
func registerMetrics(reg prometheus.Registerer, stats *Stats) error {
	if reg == nil {
		return nil
	}
	labels := []string{"system", "contract", "direction"}
	calls := prometheus.NewDesc("svc_integration_invocations_total",
		"Integration invocations on this node by system, contract, direction and failure kind (none = success).",
		append(labels, "failure"), nil)
	seconds := prometheus.NewDesc("svc_integration_invocation_seconds_total",
		"Summed duration of the invocations counted by svc_integration_invocations_total.", labels, nil)
	return reg.Register(app.NewCollector(func(_ context.Context, ch chan<- prometheus.Metric) {
		for _, st := range stats.InvocationStats() {
			ch <- prometheus.MustNewConstMetric(calls, prometheus.CounterValue, float64(st.Successes), st.System, st.Contract, st.Direction, "none")
			for kind, n := range st.Failures {
				ch <- prometheus.MustNewConstMetric(calls, prometheus.CounterValue, float64(n), st.System, st.Contract, st.Direction, kind)
			}
			ch <- prometheus.MustNewConstMetric(seconds, prometheus.CounterValue, st.TotalDuration.Seconds(), st.System, st.Contract, st.Direction)
		}
	}, calls, seconds))
}
