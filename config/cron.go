package config

import (
	"fmt"
	"strings"
	"time"
)

// Defaults of svc.cron.store.
const (
	defaultCronPollInterval      = 5 * time.Second
	defaultCronBatchSize         = 32
	defaultCronMaxConcurrent     = 16
	defaultCronMisfireThreshold  = time.Minute
	defaultCronHeartbeatInterval = 10 * time.Second
	defaultCronAbandonedAfter    = time.Minute
)

// Cron is the svc.cron section; its only subtable is the durable schedule store.
type Cron struct {
	// Store is svc.cron.store.
	Store CronStore `toml:"store"`
}

// CronStore is svc.cron.store (spec §8.3): the durable schedule store over the tables
// crn_schedule, crn_fire_request and crn_run. Negative durations and counts are startup errors
// (ErrInvalidCronStoreDuration, ErrInvalidCronStoreCount); zero selects the default.
type CronStore struct {
	// Enabled is svc.cron.store.enabled (default false): when false schedules are not loaded, no
	// table is touched and the sys/cron resources mount no operations.
	Enabled bool `toml:"enabled"`
	// AutoMigrate is svc.cron.store.auto_migrate (default false): run the cron migration at
	// startup.
	AutoMigrate bool `toml:"auto_migrate"`
	// PollInterval is svc.cron.store.poll_interval (default 5s): the longest a node waits before
	// re-reading schedules.
	PollInterval time.Duration `toml:"poll_interval"`
	// BatchSize is svc.cron.store.batch_size (default 32): schedules claimed per poll tick.
	BatchSize int `toml:"batch_size"`
	// MaxConcurrent is svc.cron.store.max_concurrent (default 16): runs in flight per node.
	MaxConcurrent int `toml:"max_concurrent"`
	// MisfireThreshold is svc.cron.store.misfire_threshold (default 1m): how late a fire may be
	// and still count as on time.
	MisfireThreshold time.Duration `toml:"misfire_threshold"`
	// HeartbeatInterval is svc.cron.store.heartbeat_interval (default 10s): how often running
	// runs are stamped alive.
	HeartbeatInterval time.Duration `toml:"heartbeat_interval"`
	// AbandonedAfter is svc.cron.store.abandoned_after (default 1m): a run without heartbeat this
	// long is abandoned. Must be at least twice heartbeat_interval (ErrCronStoreAbandonedTooSoon).
	AbandonedAfter time.Duration `toml:"abandoned_after"`
	// RunTimeout is svc.cron.store.run_timeout (default 0 = unbounded): the timeout of a run
	// whose schedule sets none.
	RunTimeout time.Duration `toml:"run_timeout"`
	// RunRetention is svc.cron.store.run_retention (default 0 = keep forever): terminal runs
	// older than this are pruned hourly.
	RunRetention time.Duration `toml:"run_retention"`
	// HTTPAllowedHosts is svc.cron.store.http_allowed_hosts (ours; default empty): where the
	// built-in http.request job may connect. Entries are host names (exact, or "*.example.com"
	// for its subdomains), IP addresses or CIDRs. Empty allows every public address; non-empty
	// allows only the listed names and addresses. Loopback, private, link-local, shared (CGNAT),
	// unspecified and cloud metadata addresses are refused unless an IP or CIDR entry covers
	// them, whatever the list says about names, and the check runs on the resolved address at
	// dial time, so DNS rebinding and redirects cannot reach them. Whoever holds
	// cron.schedule.manage chooses the URLs: keep this list as short as the jobs need.
	HTTPAllowedHosts []string `toml:"http_allowed_hosts"`
}

// negatives reports negative durations and counts (spec §7).
func (s *CronStore) negatives() []error {
	const k = "svc.cron.store."
	errs := negatives(ErrInvalidCronStoreDuration,
		dur(k+"poll_interval", s.PollInterval), dur(k+"misfire_threshold", s.MisfireThreshold),
		dur(k+"heartbeat_interval", s.HeartbeatInterval), dur(k+"abandoned_after", s.AbandonedAfter),
		dur(k+"run_timeout", s.RunTimeout), dur(k+"run_retention", s.RunRetention))
	return append(errs, negatives(ErrInvalidCronStoreCount,
		count(k+"batch_size", s.BatchSize), count(k+"max_concurrent", s.MaxConcurrent))...)
}

func (s *CronStore) applyDefaults() []error {
	errs := s.negatives()
	s.PollInterval = positive(s.PollInterval, defaultCronPollInterval)
	s.BatchSize = positive(s.BatchSize, defaultCronBatchSize)
	s.MaxConcurrent = positive(s.MaxConcurrent, defaultCronMaxConcurrent)
	s.MisfireThreshold = positive(s.MisfireThreshold, defaultCronMisfireThreshold)
	s.HeartbeatInterval = positive(s.HeartbeatInterval, defaultCronHeartbeatInterval)
	s.AbandonedAfter = positive(s.AbandonedAfter, defaultCronAbandonedAfter)
	s.RunTimeout = positive(s.RunTimeout, 0)
	s.RunRetention = positive(s.RunRetention, 0)
	return errs
}

// validate checks the raw negatives and, on effective values, abandoned_after ≥ 2 ×
// heartbeat_interval. The rule holds whether or not the store is enabled, as the original's.
func (s *CronStore) validate() []error {
	errs := s.negatives()
	hb := positive(s.HeartbeatInterval, defaultCronHeartbeatInterval)
	ab := positive(s.AbandonedAfter, defaultCronAbandonedAfter)
	if ab/2 < hb {
		errs = append(errs, fmt.Errorf("svc.cron.store.abandoned_after %s below 2 × heartbeat_interval %s: %w", ab, hb, ErrCronStoreAbandonedTooSoon))
	}
	for i, h := range s.HTTPAllowedHosts {
		if !validIPOrPrefix(h) && !validHostPattern(h) {
			errs = append(errs, fmt.Errorf("svc.cron.store.http_allowed_hosts[%d] %q: %w", i, h, ErrInvalidCronHTTPHost))
		}
	}
	return errs
}

// validHostPattern reports whether h is a DNS host name, or "*." followed by one: labels of
// letters, digits and hyphens, no scheme, port or path.
func validHostPattern(h string) bool {
	h = strings.TrimPrefix(h, "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}
