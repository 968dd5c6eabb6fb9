package integration

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// InvocationStats are the counters of one (system, contract, direction) (wire-integration §4).
// The monitor module has its own copy of this shape; the composition root converts, since
// feature modules do not import each other.
type InvocationStats struct {
	System        string           `json:"system"`
	Contract      string           `json:"contract"`
	Direction     string           `json:"direction"`
	Calls         int64            `json:"calls"`
	Successes     int64            `json:"successes"`
	Failures      map[string]int64 `json:"failures,omitempty"`
	AvgDurationMs int64            `json:"avgDurationMs"`
	MaxDurationMs int64            `json:"maxDurationMs"`
	LastError     string           `json:"lastError,omitempty"`
	LastErrorAt   time.Time        `json:"lastErrorAt,omitzero"`
	// TotalDuration is the sum of the calls' durations (not on the wire: the metrics'
	// svc_integration_invocation_seconds_total).
	TotalDuration time.Duration `json:"-"`
}

// Stats are the per-node invocation counters per (system, contract, direction) since process
// start (§11), served by sys/monitor.get_integration_stats. Safe for concurrent use.
type Stats struct {
	clock func() time.Time
	mu    sync.Mutex
	byKey map[statsKey]*counters
}

type statsKey struct{ system, contract, direction string }

type counters struct {
	calls, successes int64
	failures         map[string]int64
	total, max       time.Duration
	lastError        string
	lastErrorAt      time.Time
}

// NewStats returns empty counters stamped by clock.
func NewStats(clock func() time.Time) *Stats {
	return &Stats{clock: clock, byKey: map[statsKey]*counters{}}
}

// Record counts one invocation: a failure when failureKind is non-empty, with err's message
// as the last error. Inbound rejections are recorded with contract "" and duration 0.
func (s *Stats) Record(system, contract, direction, failureKind string, d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := statsKey{system, contract, direction}
	c := s.byKey[k]
	if c == nil {
		c = &counters{}
		s.byKey[k] = c
	}
	c.calls++
	c.total += d
	c.max = max(c.max, d)
	if failureKind == "" {
		c.successes++
		return
	}
	if c.failures == nil {
		c.failures = map[string]int64{}
	}
	c.failures[failureKind]++
	c.lastErrorAt = s.clock()
	if err != nil {
		c.lastError = err.Error()
	}
}

// InvocationStats returns a snapshot sorted by system, contract and direction; the composition root
// hands it to sys/monitor.
func (s *Stats) InvocationStats() []InvocationStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]InvocationStats, 0, len(s.byKey))
	for k, c := range s.byKey {
		st := InvocationStats{System: k.system, Contract: k.contract, Direction: k.direction, Calls: c.calls,
			Successes: c.successes, AvgDurationMs: (c.total / time.Duration(c.calls)).Milliseconds(),
			MaxDurationMs: c.max.Milliseconds(), LastError: c.lastError, TotalDuration: c.total}
		if len(c.failures) > 0 {
			st.Failures = make(map[string]int64, len(c.failures))
			for f, n := range c.failures {
				st.Failures[f] = n
			}
		}
		if !c.lastErrorAt.IsZero() {
			st.LastErrorAt = c.lastErrorAt.UTC()
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b InvocationStats) int {
		return cmp.Or(cmp.Compare(a.System, b.System), cmp.Compare(a.Contract, b.Contract), cmp.Compare(a.Direction, b.Direction))
	})
	return out
}
