package app

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ScrapeTimeout bounds one scrape, and with it every query a collector runs at scrape time
// (the metrics handler of the ops module serves with it).
const ScrapeTimeout = 5 * time.Second

// CollectFunc sends the current values of the metrics a collector describes. ctx ends after the
// scrape timeout; a value that cannot be read in time is left out, never guessed.
type CollectFunc func(ctx context.Context, ch chan<- prometheus.Metric)

// NewCollector returns a collector that reports values read at scrape time (counters a module
// already keeps, row counts from a query), so nothing needs instrumenting inline. Modules
// register it on Deps.Metrics; the ops module uses it for the bus's collectors.
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
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	c.fn(ctx, ch)
}
