package svctest

import (
	"testing"
	"time"

	"github.com/svc-framework/svc/internal/testservice"
)

// Clock is a fake clock for tests: it stands still until advanced. Pass clock.Now wherever svc
// takes a clock (svc.WithClock), then drive TTLs, expiries and schedules with Advance and Set.
// It lives in internal/testservice so that module-internal tests, which cannot import svctest
// without an import cycle, share it.
type Clock = testservice.Clock

// NewClock returns a clock set to start (UTC).
func NewClock(start time.Time) *Clock { return testservice.NewClock(start) }

// Eventually polls cond every few milliseconds until it returns true or timeout passes, then
// fails the test with msg. Use it instead of time.Sleep to wait for background work.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, msg string) {
	t.Helper()
	testservice.Eventually(t, timeout, cond, msg)
}
