package config

import "time"

// Defaults of svc.monitor.
const (
	defaultSampleInterval = 10 * time.Second
	defaultSampleDuration = 2 * time.Second
)

// Monitor is the svc.monitor section (spec §8.3).
type Monitor struct {
	// SampleInterval is svc.monitor.sample_interval (default 10s): how often host metrics are
	// sampled.
	SampleInterval time.Duration `toml:"sample_interval"`
	// SampleDuration is svc.monitor.sample_duration (default 2s): the measuring window of one
	// sample (CPU usage, network rates).
	SampleDuration time.Duration `toml:"sample_duration"`
}

func (m *Monitor) applyDefaults() {
	m.SampleInterval = positive(m.SampleInterval, defaultSampleInterval)
	m.SampleDuration = positive(m.SampleDuration, defaultSampleDuration)
}
