package ops

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// scrapeTimeout bounds one scrape, and with it every query a collector runs at scrape time.
const scrapeTimeout = 5 * time.Second

// CollectFunc sends the current values of the metrics a collector describes. ctx ends after the
// scrape timeout; a value that cannot be read in time is left out, never guessed.
type CollectFunc func(ctx context.Context, ch chan<- prometheus.Metric)

// NewCollector returns a collector that reports values read at scrape time (counters a module
// already keeps, row counts from a query), so nothing needs instrumenting inline.
func NewCollector(fn CollectFunc, descs ...*prometheus.Desc) prometheus.Collector {
	return &funcCollector{fn: fn, descs: descs}
}

type funcCollector struct {
	fn    CollectFunc
	descs []*prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *funcCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *funcCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	c.fn(ctx, ch)
}
