package security

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// metricsSink registers on reg (app.Platform.Metrics) the login counters,
// svc_security_logins_total{result} and svc_security_lockouts_total, and returns the EventSink
// that counts them; New adds it to the module's sinks. The login type is not a label: it comes
// from the request and would let a client create series. A nil reg (metrics off) returns a nil
// sink, which EventSinks skips.
func metricsSink(reg prometheus.Registerer) (EventSink, error) {
	if reg == nil {
		return nil, nil
	}
	logins := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "svc_security_logins_total",
		Help: "Login attempts by result (success, failure)."}, []string{"result"})
	locks := prometheus.NewCounter(prometheus.CounterOpts{Name: "svc_security_lockouts_total",
		Help: "Accounts locked by the lockout rule."})
	for _, c := range []prometheus.Collector{logins, locks} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	ok, failed := logins.WithLabelValues("success"), logins.WithLabelValues("failure")
	return EventSinkFunc(func(_ context.Context, e Event) {
		switch e.Type {
		case EventLoginSucceeded:
			ok.Inc()
		case EventLoginFailed:
			failed.Inc()
		case EventAccountLocked:
			locks.Inc()
		}
	}), nil
}
