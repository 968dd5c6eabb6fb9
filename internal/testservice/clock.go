package testservice

import (
	"sync"
	"time"
)

// Clock is a fake clock for tests: it stands still until advanced. Pass clock.Now wherever svc
// takes a clock (svc.WithClock), then drive TTLs, expiries and schedules with Advance.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock set to start (UTC).
func NewClock(start time.Time) *Clock { return &Clock{now: start.UTC()} }

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t.UTC()
	c.mu.Unlock()
}
