package ops

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/svc-framework/svc/rpc"
)

// APIBuckets are the latency buckets of svc_api_request_duration_seconds, in seconds: from a
// cached read (1 ms) to the engine's default timeout range.
var APIBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// apiMetrics are the /api series. Labels: resource, action and version of a registered
// operation (empty for calls that resolve to none), the business code and the HTTP status. All
// are bounded by the operation table and the error codes the modules declare.
type apiMetrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	inFlight    *prometheus.GaugeVec
	rateLimited *prometheus.CounterVec
}

func newAPIMetrics(reg prometheus.Registerer) (*apiMetrics, error) {
	op := []string{"resource", "action", "version"}
	m := &apiMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_api_requests_total",
			Help: "Answered /api calls by operation, business code and HTTP status.",
		}, append(op, "code", "status")),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "svc_api_request_duration_seconds",
			Help:    "Time from the arrival of an /api call to its written answer, by operation.",
			Buckets: APIBuckets,
		}, op),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "svc_api_requests_in_flight",
			Help: "/api calls resolved to an operation and not yet answered.",
		}, op),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_api_rate_limited_total",
			Help: "/api calls rejected by the rate limiter (429), by operation.",
		}, op),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight, m.rateLimited} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// operation creates the series children of one operation up front, so a call only adds to
// atomics: the counter children per (code, status) are created on the first call with that
// pair and cached copy-on-write.
func (m *apiMetrics) operation(resource, action, version string) *opMetrics {
	return &opMetrics{
		m:           m,
		labels:      [3]string{resource, action, version},
		duration:    m.duration.WithLabelValues(resource, action, version),
		inFlight:    m.inFlight.WithLabelValues(resource, action, version),
		rateLimited: m.rateLimited.WithLabelValues(resource, action, version),
	}
}

// opMetrics are the children of one operation.
type opMetrics struct {
	m           *apiMetrics
	labels      [3]string
	duration    prometheus.Observer
	inFlight    prometheus.Gauge
	rateLimited prometheus.Counter

	mu    sync.Mutex // serialises the rare copy-on-write of codes
	codes atomic.Pointer[map[uint64]prometheus.Counter]
}

func (o *opMetrics) resolved() { o.inFlight.Inc() }

func (o *opMetrics) done(out rpc.Outcome) {
	if out.Resolved {
		o.inFlight.Dec()
	}
	o.duration.Observe(out.Elapsed.Seconds())
	o.counter(out.Code, out.Status).Inc()
	if out.Code == rpc.CodeTooManyRequests {
		o.rateLimited.Inc()
	}
}

// counter returns the requests child of (code, status): one map read on the hot path.
func (o *opMetrics) counter(code, status int) prometheus.Counter {
	key := uint64(uint32(code))<<32 | uint64(uint32(status))
	if p := o.codes.Load(); p != nil {
		if c, ok := (*p)[key]; ok {
			return c
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	old := o.codes.Load()
	if old != nil {
		if c, ok := (*old)[key]; ok {
			return c
		}
	}
	next := make(map[uint64]prometheus.Counter, 1)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	c := o.m.requests.WithLabelValues(o.labels[0], o.labels[1], o.labels[2], strconv.Itoa(code), strconv.Itoa(status))
	next[key] = c
	o.codes.Store(&next)
	return c
}
