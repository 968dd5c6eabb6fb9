// Package latency summarises the durations the load tools under bench/ record.
package latency

import (
	"slices"
	"time"
)

// Millis answers the p-quantile (0 ≤ p ≤ 1, nearest rank) of ds in milliseconds, 0 when ds is
// empty. ds is not changed.
func Millis(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
}
