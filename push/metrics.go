package push

import "github.com/prometheus/client_golang/prometheus"

// registerMetrics registers the push series on reg (app.Platform.Metrics; issue #19), read at scrape
// time from the hub's counters so a delivery costs nothing more. No labels beyond result.
func (s *Service) registerMetrics(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	h := s.hub
	messages := func(result string, v func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "svc_push_messages_total",
			Help:        "Frames for clients on this node: sent = queued for writing, dropped = refused by a full send buffer (the connection is dropped with it).",
			ConstLabels: prometheus.Labels{"result": result},
		}, v)
	}
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "svc_push_connections",
			Help: "Open WebSocket connections on this node that receive pushes.",
		}, func() float64 { return float64(h.count.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "svc_push_dropped_slow_clients_total",
			Help: "Connections this node dropped because the client could not keep up (send buffer full).",
		}, func() float64 { return float64(h.overflows.Load()) }),
		messages("sent", func() float64 { return float64(h.queued.Load()) }),
		messages("dropped", func() float64 { return float64(h.overflows.Load()) }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
